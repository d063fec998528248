import HTTPServer
import Lifecycle

/// A started HTTP server as a service of its process's group: it serves until shutdown, then `drain` runs (the API
/// answers what is in flight; the group cancels it at the grace deadline) and the server stops listening.
public struct HTTPServerService: Service {
    public let name: String
    private let server: HTTPServer
    private let drain: @Sendable () async -> Void

    public init(name: String, server: HTTPServer, drain: @escaping @Sendable () async -> Void = {}) {
        self.name = name
        self.server = server
        self.drain = drain
    }

    public func run(shutdown: ShutdownSignal) async throws {
        await shutdown.wait()
        await drain()
        await server.shutdown()
    }
}
