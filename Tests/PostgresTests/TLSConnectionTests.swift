import Foundation
import Postgres
import Testing
import TestSupport

/// PostgreSQL TLS is libpq's own (`sslmode`, `sslrootcert` in the URL): a server with `ssl=on` and certificates
/// made by `openssl` for this run.
@Suite struct TLSConnectionTests {
    @Test func verifyFullConnectsWithTheRightCAAndRefusesAnotherOne() async throws {
        let certificates = try TestCertificates()
        let server = try await offloaded { try ThrowawayPostgres(certificates: certificates) }
        let base = "postgres://countdown@localhost:\(server.port)/postgres?sslmode=verify-full"

        let client = try PostgresClient(url: "\(base)&sslrootcert=\(certificates.caFile)")
        let rows = try await client.query("SELECT ssl::text AS ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        #expect(try rows.first?.decode("ssl", as: String.self) == "true")
        client.close()

        let untrusted = try PostgresClient(url: "\(base)&sslrootcert=\(certificates.otherCAFile)")
        let error = await #expect(throws: PostgresError.self) { try await untrusted.query("SELECT 1") }
        #expect(error?.code == .connectionFailed)
        #expect(error?.message?.contains("certificate verify failed") == true, "\(String(describing: error))")
        untrusted.close()
        try await offloaded { server.stop() }
    }
}
