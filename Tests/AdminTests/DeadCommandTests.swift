import CountdownAdmin
import CountdownCommands
import CountdownDomain
import CountdownStore
import CountdownMaintenance
import DelayQueue
import Foundation
import Testing

/// `dead list`, `dead retry` and `dead drop` on dead letters made the way a worker makes them.
@Suite struct DeadCommandTests {
    static let longError = "handler failed: " + String(repeating: "x", count: 150)

    struct Letter: Decodable {
        var id: String
        var kind: String?
        var attempts: Int
        var lastError: String
        var deadAt: Date
    }

    @Test func listShowsDeadLettersOldestFirst() async throws {
        try await AdminFixture.with { fixture in
            let empty = try await fixture.admin("dead", "list")
            #expect(empty.status == 0, "\(empty)")
            #expect(empty.stdout == "dead letters (0):\n  (none)\n")

            try await fixture.deadLetter("mystery:1")
            try await fixture.deadLetter("mystery:2", error: Self.longError)
            let run = try await fixture.admin("dead", "list", "--json")
            #expect(run.status == 0, "\(run)")
            let raw = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
            #expect(raw.map { Set($0.keys) } == Array(repeating: ["id", "kind", "attempts", "lastError", "deadAt"], count: 2))
            let letters = try run.json([Letter].self)
            #expect(letters.map(\.id) == ["mystery:1", "mystery:2"])
            #expect(letters.map(\.kind) == ["mystery", "mystery"])
            #expect(letters.map(\.attempts) == [1, 1])
            #expect(letters.map(\.lastError) == ["no handler for kind mystery", Self.longError])
            for letter in letters { #expect(abs(letter.deadAt.timeIntervalSinceNow) < 60) }

            let limited = try await fixture.admin("dead", "list", "--limit", "1", "--json").json([Letter].self)
            #expect(limited.map(\.id) == ["mystery:1"])

            let text = try await fixture.admin("dead", "list")
            let lines = text.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first == "dead letters (2):")
            #expect(lines[1].split(separator: " ") == ["JOB", "ATTEMPTS", "SINCE", "LAST", "ERROR"])
            #expect(lines[2].hasPrefix("  mystery:1  ") && lines[2].hasSuffix("no handler for kind mystery"))
            #expect(lines[3].hasSuffix(String(Self.longError.prefix(100))), "the error is cut at 100 characters")
        }
    }

    @Test func retryPutsOneBackDueNowWithFreshAttempts() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.deadLetter("mystery:1")
            try await fixture.deadLetter("mystery:2")
            let run = try await fixture.admin("dead", "retry", "mystery:1", "--json")
            #expect(run.status == 0, "\(run)")
            #expect(try run.json([String: Int].self) == ["retried": 1])
            let jobs = try await fixture.jobs(["mystery:1", "mystery:2"])
            let retried = try #require(jobs["mystery:1"])
            guard case .waiting(let due) = retried.state else { Issue.record("retried job is \(retried.state)"); return }
            #expect(abs(due.timeIntervalSinceNow) < 60)
            #expect(retried.attempts == 0)
            #expect(retried.kind == "mystery")
            guard case .dead = jobs["mystery:2"]?.state else { Issue.record("the other letter moved"); return }
            #expect(try await fixture.queue.stats().dead == 1)

            let text = try await fixture.admin("dead", "retry", "mystery:2")
            #expect(text.stdout == "1 job(s) back on the queue, due now\n")
        }
    }

    @Test func retryAllMovesEveryDeadLetter() async throws {
        try await AdminFixture.with { fixture in
            for index in 1...3 { try await fixture.deadLetter("mystery:\(index)") }
            let run = try await fixture.admin("dead", "retry", "--all", "--json")
            #expect(run.status == 0, "\(run)")
            #expect(try run.json([String: Int].self) == ["retried": 3])
            let stats = try await fixture.queue.stats()
            #expect(stats.dead == 0)
            #expect(stats.dueNow == 3)

            let none = try await fixture.admin("dead", "retry", "--all")
            #expect(none.status == 0, "\(none)")
            #expect(none.stdout == "0 job(s) back on the queue, due now\n")
        }
    }

    @Test func dropDeletesTheLetterAndItsData() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.deadLetter("mystery:1")
            try await fixture.deadLetter("mystery:2")
            let run = try await fixture.admin("dead", "drop", "mystery:1", "--json", "--yes")
            #expect(run.status == 0, "\(run)")
            #expect(try run.json([String: Int].self) == ["dropped": 1])
            #expect(Array(try await fixture.jobs(["mystery:1", "mystery:2"]).keys) == ["mystery:2"])
            #expect(try await fixture.queue.jobIDs(prefix: "mystery:", kind: nil) == ["mystery:2"])

            let text = try await fixture.admin("dead", "drop", "mystery:2", "--yes")
            #expect(text.stdout == "dropped mystery:2\n")
            #expect(try await fixture.queue.stats().dead == 0)
        }
    }

    @Test func unknownIdsFailWithOneLine() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.queuePreStartJobs("alive")
            let waiting = CountdownJob.start(stream: "alive").id
            for (arguments, id) in [(["dead", "retry", "nope"], "nope"), (["dead", "drop", "nope", "--yes"], "nope"),
                                    (["dead", "retry", waiting], waiting), (["dead", "drop", waiting, "--yes"], waiting)] {
                let run = try await fixture.admin(arguments)
                #expect(run.status == 1, "\(run)")
                #expect(run.errorLines == ["countdown-admin: no dead letter \(id)"])
            }
            guard case .waiting = try await fixture.jobs([waiting])[waiting]?.state else {
                Issue.record("a waiting job was touched by retry or drop")
                return
            }
        }
    }

    @Test func badArgumentsAreUsageErrors() async throws {
        try await AdminFixture.with { fixture in
            let cases: [([String], String)] = [
                (["dead"], "missing action: list, retry or drop"),
                (["dead", "bury"], "unknown action \"bury\": use list, retry or drop"),
                (["dead", "list", "--limit", "0"], "--limit must be a number from 1 to 100000"),
                (["dead", "list", "--limit", "ten"], "--limit must be a number from 1 to 100000"),
                (["dead", "list", "--limit"], "--limit needs a value"),
                (["dead", "list", "extra"], "unexpected argument \"extra\""),
                (["dead", "retry"], "give one job id or --all"),
                (["dead", "retry", "a", "--all"], "give one job id or --all"),
                (["dead", "retry", "a", "b"], "give one job id or --all"),
                (["dead", "drop"], "missing <jobId>"),
                (["dead", "drop", "a", "b"], "unexpected argument \"b\""),
            ]
            for (arguments, message) in cases {
                try await fixture.expectUsageError(arguments, message, usage: "usage: countdown-admin dead list")
            }
        }
    }
}
