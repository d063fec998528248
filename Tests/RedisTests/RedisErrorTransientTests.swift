import Redis
import Testing

@Suite struct RedisErrorTransientTests {
    @Test(arguments: [RedisError.Code.io, .timeout, .protocol, .closed, .connectionFailed])
    func failuresThatBreakTheConnectionAreTransient(code: RedisError.Code) {
        #expect(RedisError(code, "test").isTransient)
    }

    @Test(arguments: [RedisError.Code.invalidURL, .authenticationFailed, .server, .noScript, .unexpectedReply])
    func failuresThatWouldRepeatAreNot(code: RedisError.Code) {
        #expect(!RedisError(code, "test").isTransient)
    }
}
