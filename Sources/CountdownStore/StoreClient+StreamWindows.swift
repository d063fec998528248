import CountdownDomain

extension StoreClient: StreamWindows {
    public func streamsInStartWindow(of member: StreamQueries.Member, lead: Int) async throws -> [String] {
        try await withConnection { try StreamQueries.streamsInStartWindow(of: member, lead: lead, on: $0) }
    }

    public func expire(_ stream: String, expireAfter: Int, tolerance: Double) async throws -> StreamQueries.Expiry {
        try await withConnection { try StreamQueries.expire(stream, expireAfter: expireAfter, tolerance: tolerance, on: $0) }
    }
}
