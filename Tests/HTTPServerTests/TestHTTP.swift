import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response as a test sees it.
struct Fetched: Sendable {
    let status: Int
    let body: Data
    let headers: [String: String]
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// Sends a request with URLSession (a real HTTP client, not one of ours).
func fetch(
    _ method: String = "GET", port: Int, _ path: String, body: Data? = nil, headers: [String: String] = [:],
    host: String = "127.0.0.1", session: URLSession = .shared
) async throws -> Fetched {
    var request = URLRequest(url: URL(string: "http://\(host):\(port)\(path)")!)
    request.httpMethod = method
    request.httpBody = body
    request.timeoutInterval = 20
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let (data, response) = try await session.data(for: request)
    let http = response as! HTTPURLResponse
    var fields: [String: String] = [:]
    for (name, value) in http.allHeaderFields { fields[String(describing: name).lowercased()] = String(describing: value) }
    return Fetched(status: http.statusCode, body: data, headers: fields)
}

/// A session allowing many parallel connections to one host.
func parallelSession(_ connections: Int) -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpMaximumConnectionsPerHost = connections
    return URLSession(configuration: configuration)
}
