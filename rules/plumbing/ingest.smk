# Input functions and config lookups of the ingest stage's rules (rules/ingest.smk).
def is_url(location):
    return location.split(":", 1)[0] in ("http", "https", "ftp", "file")


def split_location(treebank, split):
    return config["treebanks"][treebank]["splits"][split]


def mirrored_file(treebank, split):
    """The local copy of a split's URL under config fetch.mirror (URL prefix -> folder), or
    None: how compute nodes without internet and `spudflow rehearse` get treebanks."""
    location = split_location(treebank, split)
    for prefix, folder in config["fetch"]["mirror"].items():
        if location.startswith(prefix):
            return str(Path(folder) / location[len(prefix):].lstrip("/"))
    return None


def fetch_url(wildcards):
    local = mirrored_file(wildcards.treebank, wildcards.split)
    if local is None:
        return split_location(wildcards.treebank, wildcards.split)
    return Path(local).resolve().as_uri()


def fetch_input(wildcards):
    local = mirrored_file(wildcards.treebank, wildcards.split)
    return [] if local is None else [local]


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
