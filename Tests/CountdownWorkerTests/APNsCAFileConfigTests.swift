import Configuration
@testable import CountdownMaintenance
import Foundation
import Testing
import TestSupport

/// `APNS_CA_FILE`: the CA certificates a worker trusts for APNs (a fake's test CA), checked at start.
@Suite struct APNsCAFileConfigTests {
    let apns = [
        "DATABASE_URL": "postgres://u:p@localhost:5432/db", "REDIS_URL": "redis://localhost:6379/0", "PUSH_TRANSPORT": "apns",
        "APNS_KEY_FILE": "/dev/null", "APNS_KEY_ID": "KEY", "APNS_TEAM_ID": "TEAM", "APNS_BUNDLE_ID": "com.example.app",
        "REMINDER_TRANSPORT": "off",
    ]

    @Test func unsetTrustsTheSystemsCertificates() throws {
        #expect(try CountdownConfig.load(from: Environment(apns)).apns?.caFile == nil)
    }

    @Test func aPEMCertificateFileIsTaken() throws {
        let certificates = try TestCertificates()
        var env = apns
        env["APNS_CA_FILE"] = certificates.caFile
        #expect(try CountdownConfig.load(from: Environment(env)).apns?.caFile == certificates.caFile)
    }

    @Test(arguments: ["missing", "not PEM"])
    func aBadFileIsRefusedByName(_ problem: String) throws {
        let path = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("ca") + ".pem")
        if problem == "not PEM" { try "hello\n".write(toFile: path, atomically: true, encoding: .utf8) }
        var env = apns
        env["APNS_CA_FILE"] = path
        let error = #expect(throws: ConfigProblems.self) { try CountdownConfig.load(from: Environment(env)) }
        #expect("\(error.map { "\($0)" } ?? "")".contains("APNS_CA_FILE"))
        #expect("\(error.map { "\($0)" } ?? "")".contains(path))
    }
}
