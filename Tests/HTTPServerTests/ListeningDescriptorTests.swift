import Foundation
import HTTPServer
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A server can take over a socket its parent bound (`listeningDescriptor`), so the port is known, and held, before
/// the server starts; a descriptor that does not listen is refused with a clear error.
@Suite struct ListeningDescriptorTests {
    @Test func aServerServesTheListeningSocketItIsHanded() async throws {
        let listener = try LoopbackListener()
        var configuration = HTTPServerConfiguration(address: "127.0.0.1:\(listener.port)", threads: 1)
        configuration.listeningDescriptor = dup(listener.descriptor)  // the server owns and closes its copy
        let server = HTTPServer(configuration: configuration) { _ in .text("adopted") }
        try server.start()
        defer { server.stop() }
        #expect(server.boundPort == listener.port)
        let answer = try await fetch(port: listener.port, "/")
        #expect(answer.status == 200 && answer.text == "adopted")
    }

    @Test func aDescriptorThatDoesNotListenIsRefused() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var configuration = HTTPServerConfiguration(address: "127.0.0.1:1", threads: 1)
        configuration.listeningDescriptor = fd
        let server = HTTPServer(configuration: configuration) { _ in .text("never") }
        #expect(throws: HTTPServerError.self) { try server.start() }
        #expect(server.boundPort == nil)
    }
}
