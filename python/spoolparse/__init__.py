"""Fast greedy dependency parsing of large corpora, from Python.

The parser is the spoolparse Rust library, memory-mapped model and all; this package only
wraps it, so that parsing here gives byte for byte what the ``spoolparse`` command gives.

    >>> import spoolparse
    >>> model = spoolparse.Model("en_ewt.model")            # doctest: +SKIP
    >>> [p] = model.parse([["The", "cat", "sat", "."]])      # doctest: +SKIP
    >>> p.heads, p.labels                                    # doctest: +SKIP
    ([2, 3, 0, 3], ['det', 'nsubj', 'root', 'punct'])

- :class:`Model`: a model file, opened once and shared by threads (parsing releases the GIL);
  it pickles as its path.
- :meth:`Model.parse`, :meth:`Model.parse_conllu`, :meth:`Model.parse_file`.
- :func:`shard_ranges`: sentence-aligned shards of a large file.
- :func:`parse_document`, :func:`pipe` (:mod:`spoolparse.document`): raw text as
  :class:`Document` objects (sentences, tokens, words, character offsets in the text).
- :mod:`spoolparse.spacy`: a spaCy pipeline whose tokenizer is spoolparse (needs spaCy).
- :mod:`spoolparse.spark`: the Spark job (``python -m spoolparse.spark --help``; needs pyspark).
"""

from ._spoolparse import InputError, Model, ModelError, Parse, __version__, shard_ranges
from .document import Document, Sentence, Token, Word, document_from_conllu, parse_document, pipe

__all__ = [
    "Document",
    "InputError",
    "Model",
    "ModelError",
    "Parse",
    "Sentence",
    "Token",
    "Word",
    "__version__",
    "document_from_conllu",
    "parse_document",
    "pipe",
    "shard_ranges",
]
