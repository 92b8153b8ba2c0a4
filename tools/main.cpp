// The `ttsim` program. The only place where errors become exit codes (all codes: tools/cli/exit_codes.hpp):
//   2 = the user's input is wrong (InputError: message names file:line:column and key, or the flag),
//   3 = a bug in ttsim (InternalError or anything unexpected).
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "models/data_dir.hpp"
#include "sim/errors.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/exit_codes.hpp"

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    // The one place the environment chooses the data directory: the library reads no environment variable.
    if (const char* data_dir = std::getenv("TTSIM_DATA_DIR"); data_dir != nullptr && *data_dir != '\0')
        ttsim::set_data_dir(data_dir);
    try {
        const int code = ttsim::cli::dispatch(args, std::cout);
        std::cout.flush();
        return code;
    } catch (const ttsim::InputError& e) {
        std::cout.flush();
        std::cerr << "ttsim: error: " << e.what() << "\n";
        return ttsim::cli::kExitBadInput;
    } catch (const ttsim::InternalError& e) {
        std::cerr << "ttsim: " << e.what() << " (please report this bug)\n";
        return ttsim::cli::kExitInternalError;
    } catch (const std::bad_alloc&) {
        std::cerr << "ttsim: internal error: out of memory\n";
        return ttsim::cli::kExitInternalError;
    } catch (const std::exception& e) {
        std::cerr << "ttsim: internal error: " << e.what() << " (please report this bug)\n";
        return ttsim::cli::kExitInternalError;
    }
}
