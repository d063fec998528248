import Foundation

extension RedisReply {
    /// The server's time in a `TIME` reply (seconds and microseconds). Any other shape is an `unexpectedReply`: callers
    /// that judge ages or due times by Redis's clock report it rather than fall back to the host's.
    public func serverTime() throws(RedisError) -> Date {
        guard let parts = array, parts.count == 2, let seconds = parts[0].integer, let micros = parts[1].integer else {
            throw RedisError(.unexpectedReply, "TIME answered \(self)", context: "TIME")
        }
        return Date(timeIntervalSince1970: Double(seconds) + Double(micros) / 1e6)
    }
}
