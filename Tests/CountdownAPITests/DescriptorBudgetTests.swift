import CountdownAPI
import Testing

@Suite struct DescriptorBudgetTests {
    @Test func theCapFitsUnderTheLimitLessThePoolAndTheReserve() throws {
        let small = try #require(DescriptorBudget(descriptorLimit: 1024, configured: 4096, pool: 16))
        #expect(small.connections == 1024 - 16 - DescriptorBudget.reserve)
        #expect(small.lowered)
        #expect(small.overloadThreshold < small.connections)
        let large = try #require(DescriptorBudget(descriptorLimit: 1 << 20, configured: 4096, pool: 16))
        #expect(large.connections == 4096)
        #expect(!large.lowered)
        #expect(large.overloadThreshold == 4096 - 409)
        #expect(DescriptorBudget(descriptorLimit: 256, configured: 4096, pool: 16) == nil, "nothing left for clients")
    }

    @Test func theSoftLimitIsRaisedToTheHardOne() {
        let raised = DescriptorBudget.raiseSoftLimit()
        #expect(raised >= 1024)
        #expect(DescriptorBudget.raiseSoftLimit() == raised, "idempotent")
    }
}
