"""Type stubs of the extension module (python/src/lib.rs); docstrings are there."""

import os
from pathlib import Path
from typing import Any, Literal, Optional, Sequence, TypedDict, Union

_Path = Union[str, "os.PathLike[str]"]
_Format = Literal["conllu", "conllx", "text", "raw"]

__version__: str

class InputError(ValueError):
    """Bad input; ``str(e)`` is ``FILE:LINE: problem``."""

    path: str
    line: int

class ModelError(ValueError):
    """A file that is not a usable spoolparse model."""

class ParseStats(TypedDict):
    sentences: int
    words: int
    lowconf: int
    malformed: int

class Parse:
    """One parsed sentence; lists are indexed by word (first word at 0)."""

    @property
    def words(self) -> list[str]: ...
    @property
    def heads(self) -> list[int]:
        """1-based head of each word, 0 for the root word."""
    @property
    def labels(self) -> list[str]: ...
    @property
    def confidence(self) -> list[float]:
        """Calibrated confidence of each word's arc."""
    @property
    def sentence_confidence(self) -> float:
        """Mean arc confidence: what ``min_confidence`` compares with."""
    @property
    def tree_prob(self) -> float: ...
    @property
    def upos(self) -> Optional[list[str]]:
        """Predicted UPOS tags, or None when the sentence came with tags."""
    @property
    def xpos(self) -> Optional[list[str]]:
        """Predicted XPOS tags, or None when the sentence came with tags."""
    @property
    def lemmas(self) -> Optional[list[str]]:
        """Predicted lemmas, or None when the model predicts none (trained before lemmas)."""
    @property
    def feats(self) -> Optional[list[str]]:
        """Predicted FEATS strings (``_``: none), or None when the model predicts none."""
    def __len__(self) -> int: ...

class Model:
    """A memory-mapped spoolparse model; thread-safe, pickles as its path."""

    def __init__(self, path: _Path, verify: bool = True, fingerprint: Optional[str] = None) -> None: ...
    @property
    def path(self) -> Path: ...
    @property
    def fingerprint(self) -> str: ...
    @property
    def has_tagger(self) -> bool: ...
    @property
    def has_tokenizer(self) -> bool: ...
    @property
    def labels(self) -> list[str]: ...
    @property
    def system(self) -> str: ...
    def parse(
        self,
        sentences: Sequence[Sequence[str]],
        upos: Optional[Sequence[Sequence[str]]] = None,
        xpos: Optional[Sequence[Sequence[str]]] = None,
    ) -> list[Parse]: ...
    def parse_conllu(
        self,
        text: str,
        *,
        format: _Format = "conllu",
        confidence: bool = True,
        retag: bool = False,
        name: str = "<string>",
    ) -> str: ...
    def parse_text(
        self, text: str, *, confidence: bool = True, sentences: Literal["model", "lines"] = "model", name: str = "<string>"
    ) -> str: ...
    # spoolparse.parse_document's: the CoNLL-U and the document's parts (not a public API).
    def _parse_text_parts(
        self, text: str, *, confidence: bool = True, sentences: Literal["model", "lines"] = "model", name: str = "<string>"
    ) -> tuple[str, list[tuple[Any, ...]]]: ...
    def parse_file(
        self,
        input: Union[_Path, Sequence[_Path]],
        accepted: _Path,
        lowconf: Optional[_Path] = None,
        min_confidence: Optional[float] = None,
        *,
        threads: int = 1,
        format: Optional[_Format] = None,
        retag: bool = False,
        confidence: bool = True,
        overwrite: bool = False,
        byte_range: Optional[tuple[int, int]] = None,
        malformed: Literal["fail", "lowconf"] = "fail",
        sentences: Literal["model", "lines"] = "model",
        min_precision: Optional[float] = None,
    ) -> ParseStats: ...
    def threshold_for(self, min_precision: float) -> float: ...
    def __reduce__(self) -> tuple[type["Model"], tuple[Path, bool, str]]: ...

def shard_ranges(path: _Path, max_bytes: int, format: Optional[_Format] = None) -> Optional[list[tuple[int, int]]]: ...
