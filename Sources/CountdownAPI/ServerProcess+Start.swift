import Configuration
import Foundation
import HTTPServer

extension ServerProcess {
    /// Starts the server and its metrics listener (exit 1 naming the address when one cannot listen), then prints
    /// `{"event":"listening",...}` with both addresses and ports on stdout, for scripts and tests.
    public func start(_ server: HTTPServer, metrics: HTTPServer) {
        do {
            try server.start()
            try metrics.start()
        } catch {
            fail("\(error)", code: 1)
        }
        let announcement = Announcement(
            address: server.boundAddress ?? "", port: server.boundPort ?? 0,
            metricsAddress: metrics.boundAddress ?? "", metricsPort: metrics.boundPort ?? 0)
        if let line = try? HTTPResponse.jsonEncoder.encode(announcement) {
            FileHandle.standardOutput.write(line + Data("\n".utf8))
        }
    }
}

/// The `{"event":"listening",...}` line.
private struct Announcement: Encodable {
    var event = "listening"
    var address: String
    var port: Int
    var metricsAddress: String
    var metricsPort: Int
}
