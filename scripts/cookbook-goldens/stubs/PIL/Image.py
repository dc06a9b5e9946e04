class Image: pass
def open(*a, **k): raise NotImplementedError
