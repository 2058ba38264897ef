#include <rampart/task/config.hpp>

#include <gtest/gtest.h>

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

TEST(Config, UnknownNameIsAnError) {
    setenv("RAMPART_TREADS", "2", 1);
    try {
        rampart::read_environment_config();
        FAIL() << "no error for a misspelt variable";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("RAMPART_TREADS"), std::string::npos);
    }
    unsetenv("RAMPART_TREADS");
}
