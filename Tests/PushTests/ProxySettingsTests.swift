@testable import HTTPClient
import Testing

/// The proxy read once from the environment must be the one libcurl would have read for every transfer.
@Suite struct ProxySettingsTests {
    @Test func readsTheVariablesInLibcurlsOrder() {
        let all = ProxySettings(environment: ["https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:2", "http_proxy": "http://plain:3",
                                              "all_proxy": "socks5h://all:4", "no_proxy": "localhost", "NO_PROXY": "ignored"])
        #expect(all.https == "http://lower:1")
        #expect(all.httpsVariable == "https_proxy")
        #expect(all.http == "http://plain:3")
        #expect(all.noProxy == "localhost")

        let upper = ProxySettings(environment: ["HTTPS_PROXY": "http://upper:2", "NO_PROXY": ".internal"])
        #expect(upper.https == "http://upper:2")
        #expect(upper.httpsVariable == "HTTPS_PROXY")
        #expect(upper.http == nil, "libcurl reads http_proxy in lowercase only")
        #expect(upper.noProxy == ".internal")

        let fallback = ProxySettings(environment: ["HTTP_PROXY": "http://ignored:5", "ALL_PROXY": "http://all:6"])
        #expect(fallback.https == "http://all:6")
        #expect(fallback.http == "http://all:6")
        #expect(fallback.httpVariable == "ALL_PROXY")
    }

    @Test func anEmptyVariableCountsAsUnset() {
        let settings = ProxySettings(environment: ["https_proxy": "", "HTTPS_PROXY": "http://upper:2", "http_proxy": "", "no_proxy": ""])
        #expect(settings.https == "http://upper:2")
        #expect(settings.http == nil)
        #expect(settings.noProxy == nil)
        #expect(ProxySettings(environment: [:]) == .none)
    }

    @Test func eachRequestGetsTheProxyOfItsScheme() {
        let settings = ProxySettings(https: "http://secure:1", http: nil)
        #expect(settings.proxy(for: "https://fcm.googleapis.com/v1/x") == "http://secure:1")
        #expect(settings.proxy(for: "http://127.0.0.1:8080/v1/x") == "", "an empty proxy also stops libcurl's own lookup")
        #expect(ProxySettings.none.proxy(for: "https://a") == "")
    }

    @Test func unusableProxiesAreNamedByTheirVariable() {
        for good in ["proxy:3128", "http://proxy:3128", "http://proxy:3128/", "socks5h://user:secret@proxy:1080", "HTTPS://proxy", "[::1]:3128", "http://[::1]"] {
            #expect(ProxySettings.problem(with: good) == nil, "\(good)")
        }
        for bad in ["ftp://proxy:21", "http://proxy:0", "http://proxy:port", "http://proxy:3128/path", "http://", "http://user@:3128", "pro xy:1"] {
            #expect(ProxySettings.problem(with: bad) != nil, "\(bad)")
        }
        let settings = ProxySettings(environment: ["HTTPS_PROXY": "ftp://proxy:21", "all_proxy": "http://fine:1"])
        let problems = settings.problems()
        #expect(problems.map(\.variable) == ["HTTPS_PROXY"])
    }

    @Test func theSummaryHidesCredentials() {
        let settings = ProxySettings(https: "http://user:secret@proxy:3128", http: "proxy:3128", noProxy: "localhost")
        #expect(settings.summary == "https via http://[REDACTED]@proxy:3128, http via proxy:3128, not for localhost")
        #expect(!settings.summary.contains("secret"))
        #expect(ProxySettings.none.summary == "none")
        #expect(ProxySettings.redacted("user:pw@proxy:1") == "[REDACTED]@proxy:1")
    }
}
