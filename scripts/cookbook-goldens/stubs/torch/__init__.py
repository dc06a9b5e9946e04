int64 = 'int64'
class Tensor(list):
    dtype = 'float'
def tensor(x, dtype=None): return Tensor(x)
def cat(xs): 
    out = Tensor()
    for x in xs: out.extend(x)
    return out
def zeros(n): return Tensor([0.0]*n)
def full(shape, v): return Tensor([v]*shape[0])
def ones(n): return Tensor([1.0]*n)
