#include "type_facts.hpp"

#include <mutex>
#include <unordered_map>

namespace rampart::replica::detail {

namespace {

type_facts work_out(MPI_Datatype type) {
    type_facts f;
    int size = 0;
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    PMPI_Type_size(type, &size);
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    f.size = size > 0 ? static_cast<std::size_t>(size) : 0;
    f.contiguous = true_lb == 0 && lb == 0 && extent == size && true_extent == size;
    f.holes = element_holes(type);
    return f;
}

bool named(MPI_Datatype t) {
    int ni = 0, na = 0, nd = 0, combiner = 0;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    return combiner == MPI_COMBINER_NAMED;
}

// Predefined types live as long as the process: by handle. Only the
// program's thread calls MPI (MPI_THREAD_SERIALIZED at most): no lock.
std::unordered_map<MPI_Datatype, type_facts>& named_facts() {
    static auto* table = new std::unordered_map<MPI_Datatype, type_facts>();
    return *table;
}

int delete_facts(MPI_Datatype, int, void* value, void*) {
    delete static_cast<type_facts*>(value);
    return MPI_SUCCESS;
}

int facts_key() {
    static int key = MPI_KEYVAL_INVALID;
    static std::once_flag once;
    std::call_once(once, [] { PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_facts, &key, nullptr); });
    return key;
}

// A derived type's handle may be freed and used again for another type:
// its facts go with it, as an attribute.
const type_facts& derived_facts(MPI_Datatype type) {
    void* value = nullptr;
    int found = 0;
    PMPI_Type_get_attr(type, facts_key(), &value, &found);
    if (found) return *static_cast<const type_facts*>(value);
    auto* facts = new type_facts(work_out(type));
    PMPI_Type_set_attr(type, facts_key(), facts);
    return *facts;
}

}  // namespace

const type_facts& facts_of(MPI_Datatype type) {
    static const type_facts none;
    // Most messages of a program are of the type of the one before.
    static MPI_Datatype last_named = MPI_DATATYPE_NULL;
    static const type_facts* last_named_facts = &none;
    if (type == last_named) return *last_named_facts;
    if (type == MPI_DATATYPE_NULL) return none;
    auto& table = named_facts();
    auto it = table.find(type);
    if (it == table.end()) {
        if (!named(type)) return derived_facts(type);
        it = table.emplace(type, work_out(type)).first;
    }
    last_named = type;
    last_named_facts = &it->second;
    return it->second;
}

}  // namespace rampart::replica::detail
