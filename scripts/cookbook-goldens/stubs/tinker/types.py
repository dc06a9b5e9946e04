from dataclasses import dataclass, field
@dataclass
class EncodedTextChunk:
    tokens: list
    type: str = 'encoded_text'
    @property
    def length(self): return len(self.tokens)
@dataclass
class ImageChunk:
    data: bytes = b''
    format: str = 'jpeg'
    expected_tokens: int = 0
    type: str = 'image'
    @property
    def length(self): return self.expected_tokens
ModelInputChunk = EncodedTextChunk | ImageChunk
@dataclass
class ModelInput:
    chunks: list
    def to_ints(self):
        out = []
        for c in self.chunks: out.extend(c.tokens)
        return out
    @property
    def length(self): return sum(c.length for c in self.chunks)
    @classmethod
    def from_ints(cls, tokens): return cls(chunks=[EncodedTextChunk(tokens=list(tokens))])
    @classmethod
    def empty(cls): return cls(chunks=[])
    def append(self, chunk): return ModelInput(chunks=self.chunks + [chunk])
    def append_int(self, t): return self.append(EncodedTextChunk(tokens=[t]))
