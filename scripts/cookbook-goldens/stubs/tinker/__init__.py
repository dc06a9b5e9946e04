from . import types
from .types import ModelInput, EncodedTextChunk, ModelInputChunk, ImageChunk
