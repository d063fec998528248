import Foundation
import TestSupport

/// One finished run of the built `countdown-admin`: exit status and what it wrote where.
struct AdminRun: Sendable, CustomStringConvertible {
    let arguments: [String]
    let status: Int32
    let stdout: String
    let stderr: String

    var description: String { "countdown-admin \(arguments.joined(separator: " ")) → \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }

    /// Non-empty lines written to stderr.
    var errorLines: [String] { stderr.split(separator: "\n").map(String.init) }

    /// Stdout parsed as the command's `--json` document (ISO-8601 dates).
    func json<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: Data(stdout.utf8))
    }

    /// Stdout parsed as an untyped JSON object, to check exactly which fields there are.
    func jsonObject() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any] else {
            throw NotAnObject(text: stdout)
        }
        return object
    }

    struct NotAnObject: Error, CustomStringConvertible {
        let text: String
        var description: String { "not a JSON object: \(text)" }
    }

    /// Starts the binary from the products directory (or `program` when it is an absolute path) with stdin
    /// closed, or reading `input`, and waits for it without holding a thread; kills it after `timeout`.
    static func launch(_ arguments: [String], environment: [String: String], timeout: Duration = .seconds(60),
                       program: String = "countdown-admin", input: String? = nil) async throws -> AdminRun {
        let scratch = URL(fileURLWithPath: TestEnvironment.scratchDirectory)
        let base = TestEnvironment.uniqueName("admin-run")
        let outURL = scratch.appendingPathComponent(base + ".out")
        let errURL = scratch.appendingPathComponent(base + ".err")
        let inURL = scratch.appendingPathComponent(base + ".in")
        defer {
            for url in [outURL, errURL, inURL] { try? FileManager.default.removeItem(at: url) }
        }
        let executable = program.hasPrefix("/") ? program : TestEnvironment.productsDirectory.appendingPathComponent(program).path
        var stdin = SpawnedProcess.Stream.null
        if let input {
            try Data(input.utf8).write(to: inURL)
            stdin = .file(inURL.path)
        }
        let process = try SpawnedProcess(
            executable, arguments, environment: environment, stdin: stdin, stdout: .file(outURL.path), stderr: .file(errURL.path))
        let status = await process.waitForExit(timeout: timeout)
        return AdminRun(
            arguments: arguments, status: status,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }
}
