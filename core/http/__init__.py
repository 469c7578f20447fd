"""HTTP at the edges: outbound clients and their error classification and signing
(:mod:`core.http.clients`), refusing private targets (:mod:`core.http.netguard`), validating the
URLs cronledger sends to (:mod:`core.http.urls`), and which proxies may name the client
(:mod:`core.http.proxies`)."""
