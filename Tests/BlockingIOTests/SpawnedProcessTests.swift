import Foundation
import Testing
import TestSupport

@Suite struct SpawnedProcessTests {
    private func scratch(_ name: String) -> String {
        (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName(name))
    }

    @Test func exitCodeAndOutputFile() async throws {
        let output = scratch("spawn-out")
        let process = try SpawnedProcess("/bin/sh", ["-c", "echo hello; echo oops >&2; exit 3"], stdout: .file(output), stderr: .file(output))
        #expect(await process.waitForExit(timeout: .seconds(10)) == 3)
        #expect(!process.isRunning)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "hello\noops\n")
    }

    @Test func environmentIsExactlyTheOneGiven() async throws {
        let output = scratch("spawn-env")
        let process = try SpawnedProcess("/usr/bin/env", [], environment: ["ONLY": "this"], stdout: .file(output))
        #expect(await process.waitForExit(timeout: .seconds(10)) == 0)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "ONLY=this\n")
    }

    @Test func sigtermWorksEvenWhenTheSpawningThreadBlocksIt() throws {
        // A child inherits the spawning thread's signal mask unless it is reset: it would ignore SIGTERM forever.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let process = try SpawnedProcess("/bin/sleep", ["30"])
        process.signal(SIGTERM)
        #expect(process.waitBlocking(deadline: Date().addingTimeInterval(10)) == SIGTERM)
    }

    @Test func stopKillsAChildThatIgnoresSigterm() throws {
        let ready = scratch("spawn-ready")
        let process = try SpawnedProcess("/bin/sh", ["-c", "trap '' TERM; echo ready; while :; do sleep 1; done"], stdout: .file(ready))
        let (line, complete) = readFirstLine(of: process, stdoutPath: ready, timeout: 10)
        #expect(complete && line == "ready")
        let started = Date()
        #expect(process.stop(grace: .milliseconds(300)) == SIGKILL)
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func theChildInheritsNoDescriptorBeyondTheStandardThree() async throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let output = scratch("spawn-fds")
        let process = try SpawnedProcess("/bin/ls", ["/proc/self/fd"], stdout: .file(output))
        #expect(await process.waitForExit(timeout: .seconds(10)) == 0)
        let descriptors = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").compactMap { Int($0) }
        // 0-2, plus the descriptor ls opened to read the directory.
        #expect(descriptors.filter { $0 > 3 }.isEmpty, "inherited: \(descriptors)")
    }
}
