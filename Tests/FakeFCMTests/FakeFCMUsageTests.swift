import Foundation
import Testing
import TestSupport

@Suite struct FakeFCMUsageTests {
    /// Runs the fake expecting it to exit at once; returns its exit status and stderr.
    func runExpectingExit(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, stderr: String) {
        var merged = ProcessInfo.processInfo.environment
        merged.removeValue(forKey: "GOOGLE_APPLICATION_CREDENTIALS")
        merged.merge(environment) { $1 }
        let (status, output) = try runProcess(
            TestEnvironment.productsDirectory.appendingPathComponent("countdown-fake-fcm").path, arguments, environment: merged)
        return (status, output)
    }

    @Test func badUsageExitsTwoWithOneClearLine() throws {
        let missing = try runExpectingExit([])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("--service-account"))

        let unreadable = try runExpectingExit(["--service-account", "/nonexistent/sa.json"])
        #expect(unreadable.status == 2)
        #expect(unreadable.stderr.contains("/nonexistent/sa.json"))

        let fake = try FakeFCMProcess()
        let badAddress = try runExpectingExit(["--service-account", fake.accountPath, "--addr", "localhost"])
        #expect(badAddress.status == 2)
        #expect(badAddress.stderr.contains("--addr"))

        let badTTL = try runExpectingExit(["--token-ttl", "0"], environment: ["GOOGLE_APPLICATION_CREDENTIALS": fake.accountPath])
        #expect(badTTL.status == 2)
        #expect(badTTL.stderr.contains("--token-ttl"))

        let badFlush = try runExpectingExit(["--record-flush-ms", "-5"], environment: ["GOOGLE_APPLICATION_CREDENTIALS": fake.accountPath])
        #expect(badFlush.status == 2)
        #expect(badFlush.stderr.contains("--record-flush-ms"))

        let badKeep = try runExpectingExit(["--keep-requests", "-1"], environment: ["GOOGLE_APPLICATION_CREDENTIALS": fake.accountPath])
        #expect(badKeep.status == 2)
        #expect(badKeep.stderr.contains("--keep-requests"))

        let taken = try runExpectingExit(["--service-account", fake.accountPath, "--addr", "127.0.0.1:\(fake.port)"])
        #expect(taken.status == 1)
        #expect(taken.stderr.contains("127.0.0.1:\(fake.port)"))
    }

    @Test func stopsCleanlyOnSIGTERM() throws {
        let fake = try FakeFCMProcess()
        #expect(fake.stop() == 0)
        #expect(fake.stderr.contains("\"msg\":\"stopping\""))
    }
}
