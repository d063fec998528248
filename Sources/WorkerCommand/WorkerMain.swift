import Configuration
import CountdownMaintenance
import CountdownWorker
import Foundation
import Telemetry

/// `countdown-worker`: configuration is validated before anything connects; every problem is one line on stderr.
/// Run by the `countdown-worker` executable and by the multi-call `countdown` (as `countdown-worker` or `countdown worker`).
public enum WorkerMain {
    /// Runs the worker until SIGTERM / SIGINT drains it and exits the process. `arguments` are the command line as the
    /// worker sees it: the program name first (`countdown-worker`), then its arguments.
    /// On the main actor (the main thread), as the executable's top-level code was: a signal mask set here is inherited
    /// by every thread started later, so SIGTERM reaches `sigwait` instead of ending the process.
    @MainActor public static func run(arguments: [String]) async -> Never {
        BuildInfo.answerVersionFlag(program: "countdown-worker", arguments: arguments)
        if arguments.count > 1 {
            let flag = arguments[1]
            if flag == "--help" || flag == "-h" {
                print("usage: countdown-worker\nConfigured by the environment (see README: DATABASE_URL, REDIS_URL, PUSH_TRANSPORT, ...). Stops on SIGTERM.")
                exit(0)
            }
            FileHandle.standardError.write(Data("countdown-worker: unexpected argument \(flag); it is configured by the environment\n".utf8))
            exit(2)
        }

        let environment = Environment()
        let config: CountdownConfig
        let logger: Logger
        do {
            config = try CountdownConfig.loadForWorker(from: environment)
            logger = config.logger.with(["service": "countdown-worker"])
        } catch let problems as ConfigProblems {
            for problem in problems.problems { FileHandle.standardError.write(Data("countdown-worker: \(problem)\n".utf8)) }
            exit(2)
        } catch {
            FileHandle.standardError.write(Data("countdown-worker: \(error)\n".utf8))
            exit(2)
        }

        do {
            let worker = try WorkerProcess(config: config, logger: logger)
            let trap = worker.trapSignals()
            if let code = await worker.checkRedisAtStart() { exit(code) }
            let code = await worker.run()
            withExtendedLifetime(trap) {}
            exit(code)
        } catch {
            FileHandle.standardError.write(Data("countdown-worker: \(error)\n".utf8))
            exit(1)
        }
    }
}
