import CCurl
import HTTPTypes

extension ProxySettings {
    /// What is wrong with each proxy URL, with the variable it came from; empty when both are usable.
    public func problems() -> [(variable: String, problem: String)] {
        var found: [(variable: String, problem: String)] = []
        for (variable, value) in [(httpsVariable ?? "https proxy", https), (httpVariable ?? "http proxy", http)] {
            guard let value, let problem = Self.problem(with: value), !found.contains(where: { $0.variable == variable }) else { continue }
            found.append((variable, problem))
        }
        return found
    }

    /// Why libcurl could not use `proxy` as it is meant, checked with libcurl's own parser (as it reads a proxy:
    /// a missing scheme means `http`); nil when it can. Stricter than libcurl in one way: the port is required,
    /// since libcurl would quietly use 1080 (443 for an `https` proxy). Never quotes the value, which may hold a
    /// password.
    static func problem(with proxy: String) -> String? {
        guard let url = curl_url() else { return "could not be checked (curl_url failed)" }
        defer { curl_url_cleanup(url) }
        let flags = UInt32(CURLU_NON_SUPPORT_SCHEME | CURLU_GUESS_SCHEME)
        let code = proxy.withCString { curl_url_set(url, CURLUPART_URL, $0, flags) }
        guard code == CURLUE_OK else { return "is not a URL libcurl can parse (\(String(cString: curl_url_strerror(code))))" }
        guard let scheme = part(CURLUPART_SCHEME, of: url)?.lowercased(), schemes.contains(scheme) else {
            return "has a scheme libcurl cannot use for a proxy; use one of \(schemes.sorted().joined(separator: ", "))"
        }
        guard part(CURLUPART_PORT, of: url) != nil else {
            return "has no port (libcurl would use 1080, or 443 for an https proxy): write host:port"
        }
        return nil
    }

    private static func part(_ which: CURLUPart, of url: OpaquePointer) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard curl_url_get(url, which, &value, 0) == CURLUE_OK, let value else { return nil }
        defer { curl_free(value) }
        return String(cString: value)
    }
}
