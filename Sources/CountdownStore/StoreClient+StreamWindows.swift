import CountdownDomain

extension StoreClient: StreamWindowStore {
    public func streamsInStartWindow(of member: StreamStore.Member, lead: Int) async throws -> [String] {
        try await withConnection { try StreamStore.streamsInStartWindow(of: member, lead: lead, on: $0) }
    }

    public func expire(_ stream: String, expireAfter: Int, tolerance: Double) async throws -> StreamStore.Expiry {
        try await withConnection { try StreamStore.expire(stream, expireAfter: expireAfter, tolerance: tolerance, on: $0) }
    }
}
