/// Which command the multi-call `countdown` runs: the one it was started as (`basename(argv[0])`, a link named
/// `countdown-worker` etc.), else the one its first argument names (`countdown worker`, or `countdown countdown-worker`).
/// Pure: the executable's `main.swift` maps the result to the commands' entry points.
enum MultiCall {
    /// The command names, without the `countdown-` prefix, in the order the usage lists them: the production
    /// commands only (the fake FCM and the benchmark are development executables of their own).
    static let commands = ["worker", "admin", "api", "console"]

    enum Resolution: Equatable {
        /// Run `program` (e.g. `countdown-worker`) with `arguments`: the program name first, then its arguments.
        case run(program: String, arguments: [String])
        case version
        case help
        /// A usage error (exit 2): the problem, printed before the usage.
        case usage(String)
    }

    static let usage = """
        usage: countdown <command> [arguments]   (or through a link named countdown-<command>)
        commands:
          worker     claims due jobs and sends the pushes (countdown-worker)
          admin      operator commands: migrate, stats, pause, ... (countdown admin help)
          api        the HTTP API of the integration guide (countdown-api)
          console    the operator console (countdown-console)
        countdown --version prints the version; each command answers --version and --help too.
        """

    static func resolve(_ argv: [String]) -> Resolution {
        if let started = argv.first.map(basename), let program = program(named: started) {
            return .run(program: program, arguments: [program] + argv.dropFirst())
        }
        guard let first = argv.dropFirst().first else { return .usage("no command given") }
        switch first {
        case "--version": return .version
        case "-h", "--help", "help": return .help
        default:
            guard let program = program(named: first) ?? program(named: "countdown-" + first) else {
                return .usage("unknown command \"\(first)\"")
            }
            return .run(program: program, arguments: [program] + argv.dropFirst(2))
        }
    }

    /// `countdown-<command>` when `name` is exactly that for one of the commands.
    private static func program(named name: String) -> String? {
        commands.map { "countdown-" + $0 }.first { $0 == name }
    }

    private static func basename(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
    }
}
