# Input functions and config lookups of the ingest stage's rules (rules/ingest.smk).
def is_url(location):
    return location.split(":", 1)[0] in ("http", "https", "ftp", "file")


def split_location(treebank, split):
    return config["treebanks"][treebank]["splits"][split]


def treebank_source(wildcards):
    """The local CoNLL-U file of a split: the configured path, or where its URL is downloaded."""
    location = split_location(wildcards.treebank, wildcards.split)
    if not is_url(location):
        return location
    suffix = ".conllu.gz" if location.endswith(".gz") else ".conllu"
    return f"resources/downloads/{wildcards.treebank}/{wildcards.split}{suffix}"


def training_share_args(wildcards):
    share = training_shares()[f"{wildcards.treebank}/{wildcards.split}"]
    rest = " --rest" if wildcards.part == "heldout" else ""
    return f"--share {share['share']} --seed {share['seed']}{rest}"


def ingest_outputs():
    """The ingested splits (their statistics table is an aggregate output)."""
    return [ingested(tb, split) for tb, split in treebank_splits()]
