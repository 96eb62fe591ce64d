// guard.cpp: hold a Redlock lock for a scope with the C++ RAII wrapper.
//
//   c++ -std=c++17 -Wall -Wextra -pedantic guard.cpp $(pkg-config --cflags --libs redlock) -o guard
//   ./guard redis://127.0.0.1:7001 redis://127.0.0.1:7002 redis://127.0.0.1:7003
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include <redlock.hpp>

int main(int argc, char **argv) {
    if (argc < 2) {
        std::cerr << "usage: " << argv[0] << " redis://host:port [redis://host:port ...]\n";
        return 2;
    }
    std::vector<std::string> urls(argv + 1, argv + argc);
    using namespace std::chrono_literals;
    try {
        redlock::Client client(urls);
        {
            redlock::Guard guard(client, "reports:nightly", 10s);
            std::cout << "locked " << guard.lock().resource() << " for " << guard.lock().validity().count()
                      << " ms (" << guard.lock().vote().granted << " of " << urls.size() << " masters)\n";
            // ... work while guard.lock().remaining() > 0ms; extend if it takes longer ...
            guard.extend(20s);
            std::cout << "extended: " << guard.lock().validity().count() << " ms\n";
        } // released here, even if the work threw

        if (auto lock = client.try_acquire("reports:nightly", 5s)) {
            std::cout << "free again: released on " << client.release(*lock) << " masters\n";
        }
        return 0;
    } catch (const redlock::Error &e) {
        std::cerr << e.status_name() << ": " << e.what() << "\n";
        return 1;
    }
}
