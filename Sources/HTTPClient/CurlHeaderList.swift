import CCurl

/// Owner of a `curl_slist` of request header lines; `deinit` runs `curl_slist_free_all`.
final class CurlHeaderList {
    private(set) var head: UnsafeMutablePointer<curl_slist>?

    init() {}

    deinit { curl_slist_free_all(head) }

    func append(_ line: String) throws {
        guard let next = curl_slist_append(head, line) else { throw HTTPClientError(.other, "curl_slist_append failed") }
        head = next
    }
}
