"""Code shared by every stage: errors, atomic outputs, the treebank format, tables, progress."""
