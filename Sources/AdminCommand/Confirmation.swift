import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The one gate in front of every command that changes or deletes data an operator cannot get back
/// or changes what the whole fleet does (`AdminUsage.confirmedCommands`: `cancel`, `set-status`, `reschedule`,
/// `pause`, `dead drop`, `tokens restore`, `quarantine drop`, and any later one): `--yes` goes ahead; on a terminal (stdin and stdout
/// both) it asks; anywhere else (`kubectl exec` without `-it`, CI, a pipe) it refuses with exit code 2, so a
/// script must say `--yes` explicitly.
///
/// Call it after the arguments are validated and before anything connects:
///
///     guard try Confirmation.ask("Cancel stream \(id)?", command: "cancel", yes: parsed.has("yes")) else { return }
enum Confirmation {
    /// Where the question goes and the answer comes from; replaced in tests of the pure decision.
    struct Terminal: Sendable {
        var isInteractive: @Sendable () -> Bool
        var ask: @Sendable (String) -> String?

        static let standard = Terminal(
            isInteractive: { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 },
            ask: { question in
                FileHandle.standardOutput.write(Data((question + " [y/N] ").utf8))
                return readLine()
            })
    }

    /// True to go ahead. False when the operator declined on the terminal (then "nothing changed" is printed).
    /// - Throws: `Refused` without `--yes` when there is no terminal to ask on.
    static func ask(_ question: String, command: String, yes: Bool, terminal: Terminal = .standard) throws(Refused) -> Bool {
        if yes { return true }
        guard terminal.isInteractive() else { throw Refused(command: command) }
        guard let answer = terminal.ask(question), ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased()) else {
            print("nothing changed")
            AdminAudit.declined.withLock { $0 = true }
            return false
        }
        return true
    }

    /// A destructive command run without a terminal and without `--yes`; exit code 2, one line.
    struct Refused: Error, CustomStringConvertible {
        let command: String
        var description: String { "\(command) changes data and asks first; not on a terminal, so pass --yes to confirm" }
    }
}
