import Configuration
import CountdownMaintenance
import HTTPClient
import HTTPTypes

extension CountdownConfig {
    /// The worker's configuration: everything `load` checks, and the forward proxy's URLs checked with libcurl's
    /// own parser (which only the push stack links). Throws every problem at once.
    public static func loadForWorker(from env: Environment = Environment()) throws -> CountdownConfig {
        var problems: [ConfigError] = []
        var loaded: CountdownConfig?
        do {
            loaded = try load(from: env)
        } catch let found as ConfigProblems {
            problems = found.problems
        }
        for (variable, problem) in ProxySettings(environment: env.values).problems() {
            problems.append(ConfigError(.invalid, variable: variable, problem: problem))
        }
        guard let loaded, problems.isEmpty else { throw ConfigProblems(problems: problems) }
        return loaded
    }
}
