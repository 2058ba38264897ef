#include <rampart/task/config.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

TEST(Config, ReadsThreads) {
    setenv("RAMPART_THREADS", "3", 1);
    EXPECT_EQ(rampart::read_environment_config().threads, 3);
    unsetenv("RAMPART_THREADS");
    EXPECT_FALSE(rampart::read_environment_config().threads.has_value());
}

TEST(Config, MalformedValueIsAnError) {
    setenv("RAMPART_THREADS", "two", 1);
    EXPECT_THROW(rampart::read_environment_config(), std::invalid_argument);
    setenv("RAMPART_THREADS", "0", 1);
    EXPECT_THROW(rampart::read_environment_config(), std::invalid_argument);
    unsetenv("RAMPART_THREADS");
}

TEST(Config, UnknownNameIsAWarningNamingTheClosestKnownOne) {
    setenv("RAMPART_TREADS", "2", 1);
    setenv("RAMPART_REPO", "/src/rampart", 1);  // unrelated: must not stop the program
    setenv("RAMPART_BUILD_DIR", "/tmp", 1);
    const auto c = rampart::read_environment_config();
    unsetenv("RAMPART_TREADS");
    unsetenv("RAMPART_REPO");
    unsetenv("RAMPART_BUILD_DIR");
    ASSERT_EQ(c.warnings.size(), 3u);
    const std::string all = c.warnings[0] + "|" + c.warnings[1] + "|" + c.warnings[2];
    EXPECT_NE(all.find("RAMPART_TREADS ignored (did you mean RAMPART_THREADS?)"), std::string::npos) << all;
    EXPECT_NE(all.find("RAMPART_REPO ignored (did you mean RAMPART_REPORT?)"), std::string::npos) << all;
    const std::string unrelated = "rampart: warning: unknown environment variable RAMPART_BUILD_DIR ignored";
    EXPECT_NE(std::find(c.warnings.begin(), c.warnings.end(), unrelated), c.warnings.end()) << all;  // no guess
    EXPECT_FALSE(c.threads.has_value());
}

TEST(Config, KillOrders) {
    auto k = rampart::parse_kill_orders("1@iter40,2@1.5s");
    ASSERT_EQ(k.size(), 2u);
    EXPECT_EQ(k[0].rank, 1);
    EXPECT_EQ(k[0].iteration, 40u);
    EXPECT_FALSE(k[0].seconds.has_value());
    EXPECT_EQ(k[1].rank, 2);
    EXPECT_DOUBLE_EQ(*k[1].seconds, 1.5);
    EXPECT_TRUE(rampart::parse_kill_orders("").empty());  // no orders
    for (const char* bad : {"1", "@iter4", "1@iter4:", "1@iter4:go", "1@:stop", "x@1s", "1@", "1@iter", "1@iterx",
                            "1@5", "1@-2s", "-1@1s", "1@1.5s,"})
        EXPECT_THROW(rampart::parse_kill_orders(bad), std::invalid_argument) << bad;
    auto end = rampart::parse_kill_orders("3@end,2@recovery");
    ASSERT_EQ(end.size(), 2u);
    EXPECT_TRUE(end[0].at_end);
    EXPECT_FALSE(end[0].during_recovery);
    EXPECT_TRUE(end[1].during_recovery);
    EXPECT_THROW(rampart::parse_kill_orders("3@ending"), std::invalid_argument);
    auto more = rampart::parse_kill_orders("1@start,2@iter7:stop,0@0.5s:stop");
    ASSERT_EQ(more.size(), 3u);
    EXPECT_TRUE(more[0].at_start);
    EXPECT_FALSE(more[0].hang);
    EXPECT_EQ(more[1].iteration, 7u);
    EXPECT_TRUE(more[1].hang);
    EXPECT_DOUBLE_EQ(*more[2].seconds, 0.5);
    EXPECT_TRUE(more[2].hang);
    setenv("RAMPART_KILL", "0@iter3", 1);
    EXPECT_EQ(rampart::read_environment_config().kills.size(), 1u);
    setenv("RAMPART_KILL", "zero@iter3", 1);
    EXPECT_THROW(rampart::read_environment_config(), std::invalid_argument);
    unsetenv("RAMPART_KILL");
}

TEST(Config, ErrorRateAndSeed) {
    setenv("RAMPART_ERROR_RATE", "0.05", 1);
    setenv("RAMPART_SEED", "42", 1);
    auto c = rampart::read_environment_config();
    EXPECT_DOUBLE_EQ(c.error_rate, 0.05);
    EXPECT_EQ(c.seed, 42u);
    for (const char* bad : {"", "x", "1.5", "-0.1", "0.1x"}) {
        setenv("RAMPART_ERROR_RATE", bad, 1);
        EXPECT_THROW(rampart::read_environment_config(), std::invalid_argument) << bad;
    }
    unsetenv("RAMPART_ERROR_RATE");
    for (const char* bad : {"", "-1", "seven"}) {
        setenv("RAMPART_SEED", bad, 1);
        EXPECT_THROW(rampart::read_environment_config(), std::invalid_argument) << bad;
    }
    unsetenv("RAMPART_SEED");
}
