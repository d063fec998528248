import Foundation
import Testing
import TestSupport

@Suite struct FakeFCMRecordTests {
    @Test func recordFileHoldsEveryAcceptedMessageAsAJSONLine() async throws {
        let recordPath = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("record") + ".jsonl")
        let fake = try FakeFCMProcess(arguments: ["--record", recordPath])
        let client = FakeFCMClient(fake)
        let token = try await client.accessToken(for: fake)
        #expect(try await client.send(Messages.liveActivity(event: "start", token: "fcm-a"), bearer: token, project: fake.project).status == 200)
        #expect(try await client.send(Messages.reminder(token: "fcm-b"), bearer: token, project: fake.project).status == 200)
        #expect(try await client.send(["token": "fcm-c"], bearer: token, project: fake.project).status == 400)

        let lines = try String(contentsOfFile: recordPath, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        let entries = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(entries.map { $0["seq"] as? Int } == [1, 2])
        #expect(entries.map { $0["event"] as? String } == ["start", "notification"])
        #expect(entries.map { $0["token"] as? String } == ["fcm-a", "fcm-b"])
        #expect(entries[0]["liveActivityToken"] as? String == "activity-token-0001")
        #expect(entries[1]["name"] as? String == "projects/\(fake.project)/messages/fake-2")
        let notification = (entries[1]["message"] as? [String: Any])?["notification"] as? [String: String]
        #expect(notification?["body"] == "10 dakika kaldı")
        #expect((entries[0]["receivedAt"] as? Double ?? 0) > 1_700_000_000)
        // The whole message is recorded as sent (nested objects, integers, unicode), after the summary fields.
        let recorded = try #require(entries[0]["message"] as? [String: Any])
        #expect(NSDictionary(dictionary: recorded).isEqual(to: Messages.liveActivity(event: "start", token: "fcm-a")))
        #expect(String(lines[0]).hasPrefix("{\"event\":\"start\",\"liveActivityToken\":\"activity-token-0001\",\"name\":"))

        // A reset forgets the in-memory list, never the file.
        #expect(try await client.call("DELETE", "/fake/messages").status == 204)
        #expect(try String(contentsOfFile: recordPath, encoding: .utf8).split(separator: "\n").count == 2)
    }

    /// `--record-flush-ms` gathers lines and writes them in order every interval, and whatever waits at a stop.
    @Test func gatheredRecordLinesAreWrittenInOrderAndAtStop() async throws {
        let recordPath = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("record") + ".jsonl")
        let lines = { (try? String(contentsOfFile: recordPath, encoding: .utf8))?.split(separator: "\n") ?? [] }
        let fake = try FakeFCMProcess(arguments: ["--record", recordPath, "--record-flush-ms", "20"])
        let client = FakeFCMClient(fake)
        let token = try await client.accessToken(for: fake)
        for n in 1...5 {
            #expect(try await client.send(Messages.reminder(token: "fcm-\(n)"), bearer: token, project: fake.project).status == 200)
        }
        try await waitUntil(timeout: .seconds(5), "five record lines") { lines().count == 5 }
        let seqs = try lines().map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])["seq"] as? Int }
        #expect(seqs == [1, 2, 3, 4, 5])
        fake.stop()

        // A long interval: the line is still in memory when the fake is asked to stop, and is written then.
        let slow = try FakeFCMProcess(arguments: ["--record", recordPath, "--record-flush-ms", "10000"])
        let slowClient = FakeFCMClient(slow)
        let slowToken = try await slowClient.accessToken(for: slow)
        #expect(try await slowClient.send(Messages.reminder(token: "fcm-last"), bearer: slowToken, project: slow.project).status == 200)
        #expect(lines().count == 5, "gathered, not yet written")
        #expect(slow.stop() == 0)
        #expect(lines().count == 6)
        #expect(lines().last?.contains("\"token\":\"fcm-last\"") == true)
    }

    @Test func pagesWithSinceLimitAndTokenFilter() async throws {
        let fake = try FakeFCMProcess()
        let client = FakeFCMClient(fake)
        let token = try await client.accessToken(for: fake)
        for n in 1...7 {
            let answer = try await client.send(Messages.reminder(token: n % 2 == 0 ? "even" : "odd-\(n)"), bearer: token, project: fake.project)
            #expect(answer.status == 200)
        }
        let all = try await client.call("GET", "/fake/messages").array
        #expect(all.map { $0["seq"] as? Int } == Array(1...7))
        #expect(try await client.call("GET", "/fake/messages?since=5").array.map { $0["seq"] as? Int } == [6, 7])
        #expect(try await client.call("GET", "/fake/messages?since=2&limit=3").array.map { $0["seq"] as? Int } == [3, 4, 5])
        #expect(try await client.call("GET", "/fake/messages?since=7").array.isEmpty)
        #expect(try await client.call("GET", "/fake/messages?token=even").array.map { $0["seq"] as? Int } == [2, 4, 6])
        #expect(try await client.call("GET", "/fake/messages?since=x").status == 400)

        #expect(try await client.call("DELETE", "/fake/messages").status == 204)
        #expect(try await client.call("GET", "/fake/messages").array.isEmpty)
        #expect(try await client.call("GET", "/fake/stats").json["accepted"] as? Int == 0)
        // Sequence numbers go on after a reset, so a reader's `since` stays valid.
        #expect(try await client.send(Messages.reminder(), bearer: token, project: fake.project).json["name"] as? String
            == "projects/\(fake.project)/messages/fake-8")
        #expect(try await client.call("GET", "/fake/messages?since=7").array.map { $0["seq"] as? Int } == [8])
    }
}
