"""Which TLS context a request gets: the verified one exactly when urllib reads the scheme as https."""

from __future__ import annotations

from urllib.parse import urlsplit

from hypothesis import given
from hypothesis import strategies as st

from reconciler.osmosis.aiohttp_transport import _tls_for, _verified_tls

_NOISE = st.sampled_from(["", "\t", "\r", "\n", " ", "\x00", "\x1f"])
_URLS = st.builds(
    lambda lead, a, b, c, rest: f"{lead}{a}{b}{c}{rest}",
    st.lists(_NOISE, max_size=2).map("".join),
    st.sampled_from(["ht", "HT", "f", ""]),
    _NOISE,
    st.sampled_from(["tps", "tp", "TPS", "tps\t", "tp s"]),
    st.sampled_from(["://bucket.test/x", ":bucket", "//x", "://[::1]:8/x", ""]),
)


@given(_URLS)
def test_the_verified_context_goes_exactly_where_urllib_reads_https(url: str) -> None:
    try:
        https = urlsplit(url).scheme == "https"
    except ValueError:
        return  # no request is made for a URL urllib cannot read
    assert (_tls_for(url) is _verified_tls()) is https
