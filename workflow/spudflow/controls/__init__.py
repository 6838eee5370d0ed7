"""Control language models trained from scratch on the treebanks' own text (docs/controls.md)."""
