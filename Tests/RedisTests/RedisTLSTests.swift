import Foundation
import Redis
import TestSupport
import Testing

/// `rediss://` against a real redis-server with TLS, certificates made by `openssl` for this run.
@Suite struct RedisTLSTests {
    let certificates: TestCertificates

    init() throws {
        certificates = try TestCertificates()
    }

    private func configuration(_ url: String, _ settings: [String: String] = [:]) throws -> RedisConfiguration {
        try RedisConfiguration(url: url, environment: ["REDIS_TLS_CA_FILE": certificates.caFile].merging(settings) { $1 })
    }

    @Test func commandsScriptsAndSubscribersWorkOverTLS() async throws {
        let server = try await ThrowawayRedis.startTLS(certificates)
        let configuration = try configuration(server.tlsURL(database: 3))
        let client = RedisClient(configuration: configuration, poolSize: 2)
        let large = [UInt8]((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try await client.command("SET", "large", RedisArgument(bytes: large))
        #expect(try await client.command("GET", "large") == .bulk(large))
        let replies = try await client.pipeline((0..<2000).map { _ in ["INCR", "counter"] })
        #expect(replies.last == .integer(2000))
        let script = RedisScript(name: "double", source: "return tonumber(redis.call('GET', KEYS[1])) * 2")
        #expect(try await client.run(script: script, keys: ["counter"]) == .integer(4000))
        #expect((try await client.command("CLIENT", "INFO").string ?? "").contains("db=3"))

        let subscriber = try RedisSubscriber(configuration: configuration, channels: ["news"])
        try await subscriber.start()
        try await client.command("PUBLISH", "news", "hello")
        #expect(try await subscriber.next(timeout: .seconds(5)) == .message(channel: Array("news".utf8), payload: Array("hello".utf8)))
        #expect(try await subscriber.next(timeout: .milliseconds(30)) == .timedOut)

        client.close()
        await server.stopInBackground()
    }

    @Test func aServerSignedByAnotherCAIsRefusedWithOneClearLine() async throws {
        let server = try await ThrowawayRedis.startTLS(certificates)
        let error = await refusal(try configuration(server.tlsURL(), ["REDIS_TLS_CA_FILE": certificates.otherCAFile]))
        #expect(error?.code == .connectionFailed)
        #expect(error?.message.contains("certificate verify failed") == true, "\(String(describing: error))")
        #expect(error?.message.contains("REDIS_TLS_CA_FILE") == true)
        #expect(error?.misconfigured == "REDIS_TLS_CA_FILE", "a misconfiguration, not an outage")
        #expect(error.map { !"\($0)".contains("\n") } == true)
        await server.stopInBackground()
    }

    @Test func theCertificateMustNameTheServer() async throws {
        let server = try await ThrowawayRedis.startTLS(certificates)
        let error = await refusal(try configuration(server.tlsURL(), ["REDIS_TLS_SERVER_NAME": "redis.example.com"]))
        #expect(error?.code == .connectionFailed)
        #expect(error?.message.contains("REDIS_TLS_SERVER_NAME") == true, "\(String(describing: error))")
        #expect(error?.misconfigured == "REDIS_TLS_SERVER_NAME")
        let byName = RedisClient(configuration: try configuration(server.tlsURL(), ["REDIS_TLS_SERVER_NAME": "localhost"]), poolSize: 1)
        #expect(try await byName.command("PING") == .status("PONG"))
        byName.close()
        await server.stopInBackground()
    }

    @Test func clientCertificatesWhenTheServerRequiresThem() async throws {
        let server = try await ThrowawayRedis.startTLS(certificates, requireClientCertificates: true)
        let error = await refusal(try configuration(server.tlsURL()))
        #expect(error?.breaksConnection == true, "\(String(describing: error))")
        // Not marked as a misconfiguration: with TLS 1.3 the server refuses after the handshake, and the client may see
        // only a reset connection, which a restarting server looks like too. Either way the message names the settings.
        #expect(error?.message.contains("REDIS_TLS_CERT_FILE") == true, "\(String(describing: error))")
        let client = RedisClient(configuration: try configuration(server.tlsURL(), [
            "REDIS_TLS_CERT_FILE": certificates.clientCertificateFile, "REDIS_TLS_KEY_FILE": certificates.clientKeyFile,
        ]), poolSize: 1)
        #expect(try await client.command("PING") == .status("PONG"))
        client.close()
        await server.stopInBackground()
    }

    @Test func aclUserWithPasswordOverTLSAndAWrongPasswordIsRefused() async throws {
        let server = try await ThrowawayRedis.startTLS(certificates, extraArguments: ["--user", "worker", "on", ">s3cret", "~*", "&*", "+@all"])
        let client = RedisClient(configuration: try configuration(server.tlsURL(credentials: "worker:s3cret")), poolSize: 1)
        #expect(try await client.command("ACL", "WHOAMI").string == "worker")
        let error = await refusal(try configuration(server.tlsURL(credentials: "worker:wrong")))
        #expect(error?.code == .authenticationFailed)
        #expect(error?.message.contains("WRONGPASS") == true, "\(String(describing: error))")
        #expect(error?.misconfigured == "REDIS_URL")
        #expect(error.map { !"\($0)".contains("s3cret") && !"\($0)".contains("wrong") } == true)
        client.close()
        await server.stopInBackground()
    }

    @Test func aPlainServerIsNotMistakenForTLS() async throws {
        let server = try await ThrowawayRedis.start()
        let url = "rediss://127.0.0.1:\(server.port)/0"
        let error = await refusal(try configuration(url))
        #expect(error?.code == .connectionFailed, "\(String(describing: error))")
        #expect(error?.context.contains("TLS") == true)
        await server.stopInBackground()
    }

    private func refusal(_ configuration: RedisConfiguration) async -> RedisError? {
        var configuration = configuration
        configuration.connectTimeout = .seconds(3)
        let client = RedisClient(configuration: configuration, poolSize: 1)
        defer { client.close() }
        do {
            _ = try await client.command("PING")
            return nil
        } catch {
            return error as? RedisError
        }
    }
}
