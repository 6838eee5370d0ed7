# Input functions and config lookups of the ingest stage's rules (rules/ingest.smk).
from spudflow.core.split_files import download_url, mirrored_file, split_files


def fetch_url(wildcards):
    """The URL of a download, or the file:// URI of its copy under config fetch.mirror (URL
    prefix -> folder): how compute nodes without internet and `spudflow rehearse` get
    treebanks."""
    url = download_url(config, wildcards.treebank, wildcards.download)
    local = mirrored_file(config["fetch"]["mirror"], url)
    return url if local is None else Path(local).resolve().as_uri()


def fetch_checksum(wildcards):
    """` --sha256 HEX` where config fetch.sha256 gives the URL's checksum, else nothing."""
    url = download_url(config, wildcards.treebank, wildcards.download)
    sha256 = config["fetch"].get("sha256", {}).get(url)
    return "" if sha256 is None else f" --sha256 {sha256}"


def fetch_input(wildcards):
    """The mirrored copy is an input, so replacing it reruns what depends on it."""
    url = download_url(config, wildcards.treebank, wildcards.download)
    local = mirrored_file(config["fetch"]["mirror"], url)
    return [] if local is None else [local]


def treebank_source(wildcards):
    """The local CoNLL-U files of a split, in order: the configured paths, or where its URLs are
    downloaded (core/split_files.py)."""
    return split_files(config, wildcards.treebank, wildcards.split)


def training_share_args(wildcards):
    share = training_shares()[f"{wildcards.treebank}/{wildcards.split}"]
    rest = " --rest" if wildcards.part == "heldout" else ""
    return f"--fraction {share['share']} --seed {share['seed']}{rest}"


def ingest_outputs():
    """The ingested splits (their statistics table is an aggregate output)."""
    return [ingested(tb, split) for tb, split in treebank_splits()]
