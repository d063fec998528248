import HTTPServer
import Testing

@Suite struct HTTPServerAddressTests {
    @Test(arguments: [
        ("0.0.0.0:9090", "0.0.0.0", 9090, HTTPServerAddress.Family.ipv4),
        ("127.0.0.1:0", "127.0.0.1", 0, .ipv4),
        ("[::1]:8080", "::1", 8080, .ipv6),
        ("[::]:80", "::", 80, .ipv6),
        (":9090", "0.0.0.0", 9090, .ipv4),
        ("localhost:65535", "127.0.0.1", 65535, .ipv4),
    ])
    func parsesValidAddresses(text: String, host: String, port: Int, family: HTTPServerAddress.Family) throws {
        let address = try HTTPServerAddress(parsing: text)
        #expect(address.host == host)
        #expect(Int(address.port) == port)
        #expect(address.family == family)
    }

    @Test(arguments: [
        ("9090", "expected host:port"),
        ("127.0.0.1:", "port must be a number"),
        ("127.0.0.1:65536", "port must be a number"),
        ("127.0.0.1:-1", "port must be a number"),
        ("127.0.0.1:http", "port must be a number"),
        ("::1:8080", "brackets"),
        ("[::1:8080", "missing \"]\""),
        ("[::1]8080", "expected \":port\""),
        ("example.com:80", "numeric IPv4 or IPv6"),
        ("300.1.1.1:80", "numeric IPv4 or IPv6"),
    ])
    func rejectsInvalidAddressesWithAReason(text: String, reason: String) {
        #expect {
            try HTTPServerAddress(parsing: text)
        } throws: { error in
            guard let error = error as? HTTPServerError else { return false }
            return error.code == .invalidAddress && error.what == text && error.reason.contains(reason)
                && error.description.contains(text)
        }
    }
}
