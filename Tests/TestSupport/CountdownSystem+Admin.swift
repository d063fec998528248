import Foundation

extension CountdownSystem {
    /// Runs `countdown-admin` against this system (on a thread of its own: it blocks while the command runs);
    /// returns its status and its output (stdout and stderr together).
    public func admin(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let executable = TestEnvironment.systemBinDirectory.appendingPathComponent("countdown-admin")
        let environment = workerEnvironment
        return try await offThePool { try runProcess(executable.path, arguments, environment: environment) }
    }

    /// Runs `countdown-admin <arguments> --json` and parses what it printed on stdout; throws when it exits non-zero
    /// or prints no JSON.
    public func adminJSON(_ arguments: [String]) async throws -> Any {
        let executable = TestEnvironment.systemBinDirectory.appendingPathComponent("countdown-admin").path
        let environment = workerEnvironment
        let base = (directory as NSString).appendingPathComponent(TestEnvironment.uniqueName("admin"))
        let (status, stdout, stderr) = try await offThePool { () throws -> (Int32, Data, String) in
            defer { for path in [base + ".out", base + ".err"] { try? FileManager.default.removeItem(atPath: path) } }
            let process = try SpawnedProcess(executable, arguments + ["--json"], environment: environment,
                                             stdout: .file(base + ".out"), stderr: .file(base + ".err"))
            let status = process.waitBlocking(deadline: Date().addingTimeInterval(300)) ?? process.stop(grace: .zero)
            return (status, (try? Data(contentsOf: URL(fileURLWithPath: base + ".out"))) ?? Data(),
                    (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? "")
        }
        let command = (["countdown-admin"] + arguments + ["--json"]).joined(separator: " ")
        guard status == 0 else { throw CommandFailed(command: command, status: status, output: stderr) }
        do {
            return try JSONSerialization.jsonObject(with: stdout, options: [.fragmentsAllowed])
        } catch {
            throw CommandFailed(command: command, status: status, output: "not JSON: \(String(decoding: stdout, as: UTF8.self))")
        }
    }
}
