import Foundation
import HTTPServer
import Telemetry
#if canImport(Glibc)
import Glibc
#endif

/// Serving for both fakes: the signal mask, the server, the `listening` line on stdout, and a clean stop on
/// SIGTERM / SIGINT.
enum FakeServer {
    /// A fake ready to serve: its handler, and what the `listening` line on stdout and the "listening" log line add.
    struct Served {
        let handler: @Sendable (HTTPRequest, HTTPResponder) -> Void
        let listening: [String: Any]
        let logFields: [String: String]
    }

    /// Blocks SIGINT and SIGTERM in this thread, before anything starts a thread (the latency line, the record flusher,
    /// the server's threads), so every thread inherits the block and the signals reach `sigwait` in `serve`: a thread
    /// without it could take a SIGTERM and end the process before it says "stopping" and writes its records.
    static func blockStopSignals() -> sigset_t {
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
        return stopSignals
    }

    /// Writes `countdown-fake-<name>: message` on stderr and exits with `code`.
    static func fail(_ program: String, _ message: String, code: Int32) -> Never {
        FileHandle.standardError.write(Data("\(program): \(message)\n".utf8))
        exit(code)
    }

    /// Serves `served` as `options` say until SIGTERM / SIGINT, then runs `stopping` and exits 0. Its `listening`
    /// gains `port` and `address` and is printed on stdout as one JSON line once the server listens; its `logFields`
    /// (with `address` and `record`) go in the "listening" log line.
    static func serve(
        _ served: Served, program: String, options: FakeOptions, stopSignals: sigset_t, log: FakeLog, stopping: () -> Void
    ) -> Never {
        var configuration = HTTPServerConfiguration(
            address: options.address, threads: options.threads, maxBodyBytes: 1 << 20, connectionTimeout: .seconds(60), connectionLimit: 8192)
        configuration.listeningDescriptor = options.listenDescriptor
        let server = HTTPServer(configuration: configuration, deferringHandler: served.handler)
        do {
            try server.start()
        } catch {
            fail(program, "\(error)", code: 1)
        }
        var announcement = served.listening
        announcement["event"] = "listening"
        announcement["port"] = server.boundPort ?? 0
        announcement["address"] = server.boundAddress ?? ""
        if let line = try? JSONSerialization.data(withJSONObject: announcement, options: [.sortedKeys, .withoutEscapingSlashes]) {
            FileHandle.standardOutput.write(line + Data("\n".utf8))
        }
        let fields = ["address": server.boundAddress ?? "", "record": options.recordPath ?? "", "version": BuildInfo.version]
        log.info("listening", served.logFields.merging(fields) { $1 })
        var received: Int32 = 0
        var signals = stopSignals
        sigwait(&signals, &received)
        log.info("stopping", ["signal": String(received)])
        server.stop()
        stopping()
        exit(0)
    }
}
