# minimal stand-in for pydantic v2: fields from annotations, defaults, model_dump
import typing
def ConfigDict(**kw): return dict(kw)
_MISSING = object()
class BaseModel:
    model_config = {}
    def __init__(self, **kw):
        hints = {}
        for c in reversed(type(self).__mro__):
            hints.update(getattr(c, '__annotations__', {}))
        for k in hints:
            if k == 'model_config': continue
            if k in kw: v = kw.pop(k)
            else:
                v = getattr(type(self), k, _MISSING)
                if v is _MISSING: raise TypeError(f'missing field {k}')
            object.__setattr__(self, k, v)
        if kw: raise TypeError(f'extra fields {list(kw)}')
        object.__setattr__(self, '_fields', [k for k in hints if k != 'model_config'])
    def model_dump(self, mode=None, **_):
        out = {}
        for k in self._fields:
            v = getattr(self, k)
            out[k] = v.model_dump() if isinstance(v, BaseModel) else v
        return out
    def model_copy(self, update=None, **_):
        d = {k: getattr(self, k) for k in self._fields}; d.update(update or {})
        return type(self)(**d)
    def __eq__(self, o): return type(o) is type(self) and self.model_dump() == o.model_dump()
    def __hash__(self): return hash(repr(self.model_dump()))
    def __repr__(self): return f'{type(self).__name__}({self.model_dump()})'
