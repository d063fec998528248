import Foundation
import Testing
import TestSupport

/// `countdown-fake-fcm apns`: its flags, its record file and its stop.
@Suite struct FakeAPNsUsageTests {
    func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("APNS_") && !$0.key.hasPrefix("FAKE_APNS_") }
        environment["LOG_LEVEL"] = nil
        return try runProcess(TestEnvironment.productsDirectory.appendingPathComponent("countdown-fake-fcm").path, ["apns"] + arguments,
                              environment: environment)
    }

    @Test func badUsageExitsTwoNamingTheFlag() throws {
        let ids = ["--key-id", "K", "--team-id", "T", "--bundle-id", "com.example.app"]
        let missing = try run(ids)
        #expect(missing.status == 2 && missing.output.contains("--key"))
        let unreadable = try run(["--key", "/nonexistent/AuthKey.p8"] + ids)
        #expect(unreadable.status == 2 && unreadable.output.contains("/nonexistent/AuthKey.p8"))
        let noBundle = try run(["--key", "/dev/null", "--key-id", "K", "--team-id", "T"])
        #expect(noBundle.status == 2 && noBundle.output.contains("--bundle-id"))
        let badLimit = try run(["--key", "/dev/null", "--max-channels", "-1"] + ids)
        #expect(badLimit.status == 2 && badLimit.output.contains("--max-channels"))
        let unknown = try run(["--service-account", "x.json"] + ids)
        #expect(unknown.status == 2 && unknown.output.contains("--service-account"))
        let help = try run(["--help"])
        #expect(help.status == 0 && help.output.contains("countdown-fake-fcm apns") && help.output.contains("nghttpx"))
    }

    @Test func acceptedPushesAreRecordedAndTheFakeStopsCleanly() async throws {
        let directory = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("fakeapns-record"))
        let record = "\(directory)/pushes.jsonl"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let apns = try await FakeAPNsProcess(arguments: ["--record", record], directory: directory)
        let client = try FakeAPNsClient(apns)
        let token = String(repeating: "0f", count: 32)
        #expect(try await client.push(token, body: FakeAPNsClient.aps("end")).status == 200)
        let channel = try await client.createChannel()
        #expect(try await client.broadcast(channel: channel).status == 200)
        #expect(apns.stop() == 0, "SIGTERM stops the fake with status 0: \(apns.stderr)")
        let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n")
        let objects = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(objects.map { $0["kind"] as? String } == ["device", "broadcast"])
        #expect(objects.first?["token"] as? String == token && objects.first?["event"] as? String == "end")
        #expect(objects.last?["channelId"] as? String == channel)
        #expect(apns.stderr.contains("\"service\":\"countdown-fake-apns\""))
    }
}
