@testable import HTTPClient
import HTTPTypes
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
        let good = ["proxy:3128", "http://proxy:3128", "http://proxy:3128/", "http://proxy:3128/ignored", "socks5h://user:secret@proxy:1080",
                    "HTTPS://proxy:443", "socks://proxy:1080", "[::1]:3128", "http://[::1]:3128"]
        for proxy in good {
            #expect(ProxySettings.problem(with: proxy) == nil, "\(proxy)")
        }
        // No port: libcurl would use 1080 and every push would fail to connect, so it is refused at start.
        let bad = ["ftp://proxy:21", "http://proxy", "proxy", "http://proxy:port", "http://", "http://user:secret:proxy", "pro xy:1"]
        for proxy in bad {
            let problem = ProxySettings.problem(with: proxy)
            #expect(problem != nil, "\(proxy)")
            #expect(problem?.contains("secret") != true, "never quote the value: \(problem ?? "")")
        }
        let settings = ProxySettings(environment: ["HTTPS_PROXY": "ftp://proxy:21", "all_proxy": "http://fine:1"])
        #expect(settings.problems().map(\.variable) == ["HTTPS_PROXY"])
        let shared = ProxySettings(environment: ["ALL_PROXY": "http://no-port"])
        #expect(shared.problems().map(\.variable) == ["ALL_PROXY"], "one variable, named once")
        #expect(ProxySettings(environment: ["http_proxy": "http://p:1"]) == ProxySettings(http: "http://p:1"),
                "equal whatever variable the value came from")
    }

    @Test func libcurlsMessagesLoseTheProxysCredentials() {
        let settings = ProxySettings(https: "http://user:secret@proxy:3128", http: "http://proxy:8080")
        let message = "Unsupported proxy syntax in 'http://user:secret@proxy:3128': Bad hostname"
        #expect(settings.redacting(message) == "Unsupported proxy syntax in 'http://[REDACTED]@proxy:3128': Bad hostname")
        #expect(settings.redacting("Failed to connect to proxy port 8080") == "Failed to connect to proxy port 8080")
    }

    @Test func theSummaryHidesCredentials() {
        let settings = ProxySettings(https: "http://user:secret@proxy:3128", http: "proxy:3128", noProxy: "localhost")
        #expect(settings.summary == "https via http://[REDACTED]@proxy:3128, http via proxy:3128, not for localhost")
        #expect(!settings.summary.contains("secret"))
        #expect(ProxySettings.none.summary == "none")
        #expect(ProxySettings.redacted("user:pw@proxy:1") == "[REDACTED]@proxy:1")
    }
}
