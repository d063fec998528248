import Configuration
@testable import CountdownConsole
import Testing

@Suite("Console: configuration")
struct ConsoleConfigTests {
    static let base = ["DATABASE_URL": "postgres://u@127.0.0.1:5432/db", "REDIS_URL": "redis://127.0.0.1:6379"]

    func problems(_ values: [String: String]) -> [ConfigError] {
        do {
            _ = try ConsoleConfig.load(from: Environment(Self.base.merging(values) { $1 }))
            return []
        } catch let error as ConfigProblems {
            return error.problems
        } catch {
            return [ConfigError(.invalid, variable: "?", problem: "\(error)")]
        }
    }

    @Test func authIsRequired() {
        #expect(problems([:]).map(\.variable) == ["CONSOLE_AUTH"])
        #expect(problems(["CONSOLE_AUTH": "basic"]).map(\.variable) == ["CONSOLE_AUTH"])
    }

    @Test func proxyModeNeedsTrustedProxies() {
        #expect(problems(["CONSOLE_AUTH": "proxy"]).map(\.variable) == ["CONSOLE_TRUSTED_PROXIES"])
        #expect(problems(["CONSOLE_AUTH": "proxy", "CONSOLE_TRUSTED_PROXIES": "10.0.0.0/33"]).map(\.variable) == ["CONSOLE_TRUSTED_PROXIES"])
        #expect(problems(["CONSOLE_AUTH": "proxy", "CONSOLE_TRUSTED_PROXIES": "10.0.0.0/8"]).isEmpty)
    }

    @Test func jwtModeReadsTheConsoleJWTVariables() {
        #expect(problems(["CONSOLE_AUTH": "jwt"]).first?.variable.contains("CONSOLE_JWT_SECRET") == true)
        #expect(problems(["CONSOLE_AUTH": "jwt", "CONSOLE_JWT_SECRET": "short"]).map(\.variable) == ["CONSOLE_JWT_SECRET"])
        #expect(problems(["CONSOLE_AUTH": "jwt", "CONSOLE_JWT_SECRET": String(repeating: "s", count: 32)]).isEmpty)
    }

    @Test func defaultsAndOtherChecks() throws {
        let config = try ConsoleConfig.load(from: Environment(Self.base.merging(
            ["CONSOLE_AUTH": "proxy", "CONSOLE_TRUSTED_PROXIES": "127.0.0.1", "CONSOLE_OPERATOR_GROUPS": "oncall, sre"]) { $1 }))
        #expect(config.address == "127.0.0.1:8090" && config.metricsAddress == "127.0.0.1:9092")
        #expect(config.userHeader == "X-Forwarded-User" && config.groupsHeader == "X-Forwarded-Groups")
        #expect(config.operatorGroups == ["oncall", "sre"] && config.csrfKey == nil)
        #expect(problems(["CONSOLE_AUTH": "proxy", "CONSOLE_TRUSTED_PROXIES": "127.0.0.1", "CONSOLE_CSRF_KEY": "short"]).map(\.variable)
                == ["CONSOLE_CSRF_KEY"])
        #expect(problems(["CONSOLE_AUTH": "proxy", "CONSOLE_TRUSTED_PROXIES": "127.0.0.1", "CONSOLE_USER_HEADER": "X User"]).map(\.variable)
                == ["CONSOLE_USER_HEADER"])
    }
}
