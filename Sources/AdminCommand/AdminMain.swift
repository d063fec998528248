import Configuration
import CountdownAdmin
import CountdownCommands
import CountdownDomain
import CountdownStore
import CountdownMaintenance
import Foundation
import Redis
import Telemetry

#if canImport(Glibc)
import Glibc
#endif

/// `countdown-admin`, run by the `countdown-admin` executable and by the multi-call `countdown`.
public enum AdminMain {
    /// Runs one admin command and exits the process with its status. `arguments`: the program name, then the command.
    /// On the main actor (the main thread), as the executable's top-level code was: a signal mask set here is inherited
    /// by every thread started later, so SIGTERM reaches `sigwait` instead of ending the process.
    @MainActor public static func run(arguments: [String]) async -> Never {
        BuildInfo.answerVersionFlag(program: "countdown-admin", arguments: arguments)

        func fail(_ message: String, code: Int32) -> Never {
            FileHandle.standardError.write(Data("countdown-admin: \(message)\n".utf8))
            exit(code)
        }

        let arguments = Array(arguments.dropFirst())
        guard let command = arguments.first else {
            FileHandle.standardError.write(Data((AdminUsage.summary + "\n").utf8))
            exit(2)
        }
        if ["--help", "-h", "help"].contains(command) {
            print(AdminUsage.summary)
            exit(0)
        }
        let (actor, rest) = AdminAudit.actor(in: Array(arguments.dropFirst()))
        let auditAction = AdminAudit.action(command, rest)

        do {
            do {
                try await AdminAudit.$commandActor.withValue(actor) { try await AdminCommands.run(command, rest) }
            } catch let error where auditAction != nil && !(error is UsageError) && !(error is ConfigProblems) && !(error is ConfigError) {
                let outcome = error is Confirmation.Refused ? "refused: not confirmed (no --yes)" : "failed: \(error)"
                await AdminAudit.record(action: auditAction ?? "", arguments: rest, actor: actor, outcome: outcome)
                throw error
            }
            if let auditAction {
                let declined = AdminAudit.declined.withLock { $0 }
                await AdminAudit.record(action: auditAction, arguments: rest, actor: actor, outcome: declined ? "refused: not confirmed" : "done")
            }
            exit(0)
        } catch let error as UsageError {
            fail("\(error)\n\(AdminUsage.details[command] ?? AdminUsage.summary)", code: 2)
        } catch let error as Confirmation.Refused {
            fail(error.description, code: 2)
        } catch let error as ConfigProblems {
            fail(error.problems.map(\.description).joined(separator: "\ncountdown-admin: "), code: 2)
        } catch let error as ConfigError {
            fail(error.description, code: 2)
        } catch let error as RedisError where error.misconfigured != nil {
            // A certificate not trusted, an unknown Sentinel master, credentials refused: the settings are wrong.
            fail(RedisStartupCheck.line(for: error), code: 2)
        } catch let error as StreamCommands.Failure {
            fail(error.detail, code: 1)
        } catch {
            fail("\(error)", code: 1)
        }
    }
}
