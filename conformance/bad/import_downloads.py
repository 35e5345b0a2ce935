"""HC101: the word list is downloaded at import time, so the module cannot even be imported offline."""

import urllib.request

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC101", "HC902"]

WORDS = urllib.request.urlopen("https://example.com/words.txt", timeout=5).read().decode().split()


class DownloadingEnv(LetterCountEnv):
    name = "import-downloads"


if __name__ == "__main__":
    DownloadingEnv.cli()
