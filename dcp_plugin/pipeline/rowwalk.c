/* The walk of patches._plan_rows in C, with the next rows' objects prefetched.
 *
 * A warm request checks and writes thousands of tool states spread over the host's heap. The
 * compiled Python loop reaches them one chain at a time (message, parts, part, state, output,
 * time): each hop waits for memory before the next row can start. Here the rows go by blocks, and
 * while one block is checked, the blocks after it are each taken one hop further (see hop()): the
 * waits of many rows overlap instead of adding up.
 *
 * walk() decides exactly what the Python loop decides, or declines: it returns None (and has put
 * back whatever it wrote) on anything the fast path does not cover -- an object of another type
 * than exact list, dict, str or int, a missing key, a part naming another call, an exception --
 * and the Python loop then runs as if walk() had never been called. It never raises for the
 * host's data; every object it works on is held by a strong reference while it does.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define BLOCK 32
/* The hops from the host's list to a row's time table (see hop()): how many blocks ahead the first is taken. */
#define HOPS 10

/* What Rows.fits holds for a row (pipeline/applied.py). */
#define MISSED 0
#define FIT 1
#define UNCHECKED 2

static PyObject *k_parts, *k_state, *k_output, *k_status, *k_time, *k_compacted, *k_call_id, *k_completed;

#ifndef Py_GIL_DISABLED
/* Prefetches never fault, whatever the address: only where to look is read from real objects. */
#if defined(__GNUC__) || defined(__clang__)
#define AHEAD(p) __builtin_prefetch((const void *)(p), 0, 3)
#define AHEAD_TO_WRITE(p) __builtin_prefetch((const void *)(p), 1, 3)
#else /* a compiler without the builtin: the same walk, without asking ahead */
#define AHEAD(p) ((void)(p))
#define AHEAD_TO_WRITE(p) ((void)(p))
#endif

static PyObject *exact_dict_item(PyObject *dict, PyObject *key) {
    /* A new reference to dict[key] when dict is an exact dict holding key; otherwise NULL, with an error set
       only when the lookup itself failed (a key's own == raising). */
    PyObject *value;
    if (dict == NULL || !PyDict_CheckExact(dict)) return NULL;
    value = PyDict_GetItemWithError(dict, key);
    Py_XINCREF(value);
    return value;
}

static PyObject *list_item(PyObject *list, Py_ssize_t at) {
    /* A new reference to list[at] when list is an exact list and at in range; otherwise NULL. */
    if (list == NULL || !PyList_CheckExact(list) || at < 0 || at >= PyList_GET_SIZE(list)) return NULL;
    return Py_NewRef(PyList_GET_ITEM(list, at));
}

static Py_ssize_t index_at(PyObject *column, Py_ssize_t row) {
    /* The int in column[row], or -1 when it is not an exact int in range (no error left set). */
    PyObject *item;
    Py_ssize_t value;
    if (row >= PyList_GET_SIZE(column)) return -1;
    item = PyList_GET_ITEM(column, row);
    if (!PyLong_CheckExact(item)) return -1;
    value = PyLong_AsSsize_t(item);
    if (value == -1 && PyErr_Occurred()) PyErr_Clear();
    return value;
}

static void replace(PyObject **slot, PyObject *next) {
    PyObject *previous = *slot;
    *slot = next;
    Py_XDECREF(previous);
}

static void ahead_dict(PyObject *dict) {
    /* The dict's table: its indices and first entries, where a lookup goes next. */
    if (dict != NULL && PyDict_CheckExact(dict)) {
        const char *keys = (const char *)((PyDictObject *)dict)->ma_keys;
        AHEAD(keys);
        AHEAD(keys + 64);
    }
}

static PyObject *peek(PyObject *dict, PyObject *key) {
    /* exact_dict_item for a prefetch: a failed lookup leaves no error. */
    PyObject *value = exact_dict_item(dict, key);
    if (value == NULL) PyErr_Clear();
    return value;
}

static void follow(PyObject **slot, PyObject *next, int to_write) {
    /* Hold ``next`` (a new reference, or NULL) in place of what ``slot`` held, and ask for it ahead. */
    replace(slot, next);
    if (next == NULL) return;
    if (to_write) AHEAD_TO_WRITE(next);
    else AHEAD(next);
}

static void ahead_item(PyObject *dict, PyObject *key, int to_write) {
    /* Ask ahead for dict[key], which the row's check reads (or overwrites), without keeping it. */
    PyObject *item = peek(dict, key);
    if (item == NULL) return;
    if (to_write) AHEAD_TO_WRITE(item);
    else AHEAD(item);
    Py_DECREF(item);
}

/* The blocks in flight (block b in slot b % HOPS): what each of its rows has reached so far, held. */
typedef struct {
    PyObject *held[HOPS][BLOCK];
    Py_ssize_t part_at[HOPS][BLOCK];
} Ahead;

static void hop(Ahead *ahead, int step, PyObject *host, PyObject *messages, PyObject *parts, Py_ssize_t block,
                Py_ssize_t rows) {
    /* One hop of the rows of ``block``: ask for the objects the next hop reads.

       Each hop of one block is taken one block's work after the one before it, so what a hop
       reads has arrived by then and no hop waits for memory. Lookups may run a key's own ==
       (any code): each object kept between hops is held, and the row's indices are read first,
       so nothing read here can be freed or moved under it. */
    Py_ssize_t start = block * BLOCK, count = rows - start, r;
    PyObject **held;
    Py_ssize_t *part_at;
    if (block < 0 || count <= 0) return;
    if (count > BLOCK) count = BLOCK;
    held = ahead->held[block % HOPS];
    part_at = ahead->part_at[block % HOPS];
    switch (step) {
    case 0: /* the message */
        for (r = 0; r < count; r++) {
            part_at[r] = index_at(parts, start + r);
            follow(&held[r], list_item(host, index_at(messages, start + r)), 0);
        }
        break;
    case 1:
    case 5:
        for (r = 0; r < count; r++) ahead_dict(held[r]);
        break;
    case 2: /* its parts */
        for (r = 0; r < count; r++) follow(&held[r], peek(held[r], k_parts), 0);
        break;
    case 3:
        for (r = 0; r < count; r++) {
            PyObject *list = held[r];
            if (list != NULL && PyList_CheckExact(list) && part_at[r] >= 0 && part_at[r] < PyList_GET_SIZE(list))
                AHEAD(((PyListObject *)list)->ob_item + part_at[r]);
        }
        break;
    case 4: /* the part */
        for (r = 0; r < count; r++) follow(&held[r], list_item(held[r], part_at[r]), 0);
        break;
    case 6: /* its call id and tool state */
        for (r = 0; r < count; r++) {
            ahead_item(held[r], k_call_id, 0);
            follow(&held[r], peek(held[r], k_state), 1);
        }
        break;
    case 7:
        for (r = 0; r < count; r++) {
            ahead_dict(held[r]);
            if (held[r] != NULL && PyDict_CheckExact(held[r]))
                AHEAD_TO_WRITE((const char *)((PyDictObject *)held[r])->ma_keys + 128);
        }
        break;
    case 8: /* the state's output, status and time */
        for (r = 0; r < count; r++) {
            ahead_item(held[r], k_output, 1);
            ahead_item(held[r], k_status, 0);
            follow(&held[r], peek(held[r], k_time), 0);
        }
        break;
    default: /* the time's table; the block's objects are let go */
        for (r = 0; r < count; r++) {
            ahead_dict(held[r]);
            replace(&held[r], NULL);
        }
    }
}

static void let_go(Ahead *ahead) {
    int slot, r;
    for (slot = 0; slot < HOPS; slot++)
        for (r = 0; r < BLOCK; r++) replace(&ahead->held[slot][r], NULL);
}

/* What one row's check found. */
enum verdict { MISSES, FITS, DECLINE };

static enum verdict plain_truth(PyObject *value) {
    /* Truth of a value of a builtin type whose truth runs no Python code; DECLINE for any other. */
    int truth;
    if (value == Py_None || value == Py_False) return MISSES;
    if (value == Py_True) return FITS;
    if (!(PyLong_CheckExact(value) || PyFloat_CheckExact(value) || PyUnicode_CheckExact(value))) return DECLINE;
    truth = PyObject_IsTrue(value);
    return truth < 0 ? DECLINE : (truth ? FITS : MISSES);
}

static enum verdict whole_fits(PyObject *state, PyObject *output, Py_ssize_t length, PyObject *prefix) {
    /* still_fits for a whole output placeholder, as _plan_rows inlines it. */
    PyObject *status, *when, *compacted;
    enum verdict found;
    int starts, equal;
    if (PyUnicode_GET_LENGTH(output) <= length) return MISSES;
    starts = (int)PyUnicode_Tailmatch(output, prefix, 0, PY_SSIZE_T_MAX, -1);
    if (starts < 0) {
        PyErr_Clear();
        return DECLINE;
    }
    if (starts) return MISSES;
    status = PyDict_GetItemWithError(state, k_status);
    if (status == NULL) {
        if (PyErr_Occurred()) {
            PyErr_Clear();
            return DECLINE;
        }
        return MISSES; /* None == "completed" */
    }
    if (status != k_completed) {
        /* A builtin that is not a str never equals one; any other type's == may be anything. */
        if (status == Py_None || PyBool_Check(status) || PyLong_CheckExact(status) || PyFloat_CheckExact(status) ||
            PyDict_CheckExact(status) || PyList_CheckExact(status))
            return MISSES;
        if (!PyUnicode_CheckExact(status)) return DECLINE;
        Py_INCREF(status);
        equal = PyUnicode_Compare(status, k_completed) == 0;
        Py_DECREF(status);
        if (!equal) return MISSES;
    }
    when = exact_dict_item(state, k_time);
    if (when == NULL) return PyErr_Occurred() ? (PyErr_Clear(), DECLINE) : FITS;
    if (!PyDict_CheckExact(when)) {
        Py_DECREF(when);
        return FITS;
    }
    compacted = exact_dict_item(when, k_compacted);
    Py_DECREF(when);
    if (compacted == NULL) return PyErr_Occurred() ? (PyErr_Clear(), DECLINE) : FITS;
    found = plain_truth(compacted);
    Py_DECREF(compacted);
    if (found == DECLINE) return DECLINE;
    return found == FITS ? MISSES : FITS;
}

/* What a write replaced, to put back when the walk declines. The states are held by the list of
   states found (let go only after putting back), the fields and what they held here: letting go of
   each state again after the walk would reach every one of them from memory a second time. */
typedef struct {
    PyObject **states, **fields, **olds;
    Py_ssize_t count;
} Stores;

static void put_back(Stores *stores) {
    /* The latest first: a state the host sent twice gets its first value back last. */
    Py_ssize_t at;
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    for (at = stores->count - 1; at >= 0; at--) {
        if (PyDict_SetItem(stores->states[at], stores->fields[at], stores->olds[at]) < 0) PyErr_Clear();
    }
    PyErr_Restore(type, value, traceback);
}

static void drop_stores(Stores *stores) {
    Py_ssize_t at;
    for (at = 0; at < stores->count; at++) {
        Py_DECREF(stores->fields[at]);
        Py_DECREF(stores->olds[at]);
    }
    PyMem_Free(stores->states);
    PyMem_Free(stores->fields);
    PyMem_Free(stores->olds);
}

static int same_length(PyObject *column, Py_ssize_t rows) {
    return PyList_CheckExact(column) && PyList_GET_SIZE(column) == rows;
}

/* One row: its state (held) appended to ``found``, or None when it does not fit; 0 when done, -1 to decline. */
static int walk_row(PyObject *host, PyObject **columns, PyObject *fits, Py_ssize_t i, Py_ssize_t trusted_before,
                    int write, PyObject *prefix, PyObject *check, PyObject *found, Stores *stores, int *missed) {
    PyObject *row[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    PyObject *message = NULL, *parts = NULL, *part = NULL, *state = NULL, *call_id = NULL, *output = NULL;
    PyObject *old = NULL, *stored;
    Py_ssize_t message_at, part_at, length, c;
    enum verdict verdict = DECLINE;
    int result = -1, last_check;

    /* The row's own items, held: a callback or a key's == could change the columns meanwhile. */
    for (c = 0; c < 6; c++)
        if ((row[c] = list_item(columns[c], i)) == NULL) goto done;
    if (!PyLong_CheckExact(row[0]) || !PyLong_CheckExact(row[1]) || !PyUnicode_CheckExact(row[2]) ||
        !PyLong_CheckExact(row[3]) || !PyUnicode_CheckExact(row[4]))
        goto done;
    message_at = PyLong_AsSsize_t(row[0]);
    part_at = PyLong_AsSsize_t(row[1]);
    length = PyLong_AsSsize_t(row[3]);
    if (PyErr_Occurred() || i >= PyByteArray_GET_SIZE(fits)) goto done;
    last_check = (unsigned char)PyByteArray_AS_STRING(fits)[i];
    if ((message = list_item(host, message_at)) == NULL || (parts = exact_dict_item(message, k_parts)) == NULL ||
        (part = list_item(parts, part_at)) == NULL || (state = exact_dict_item(part, k_state)) == NULL ||
        !PyDict_CheckExact(state) || (call_id = exact_dict_item(part, k_call_id)) == NULL)
        goto done;
    if (call_id != row[2] && (!PyUnicode_CheckExact(call_id) || PyUnicode_Compare(call_id, row[2]) != 0)) goto done;
    if (message_at < trusted_before && last_check != UNCHECKED) {
        verdict = last_check == FIT ? FITS : MISSES;
    } else {
        if (length >= 0 && (output = exact_dict_item(state, k_output)) == NULL) goto done; /* the Python loop's KeyError */
        if (output != NULL && PyUnicode_CheckExact(output)) {
            verdict = whole_fits(state, output, length, prefix);
            old = output;
            output = NULL;
        } else {
            PyObject *answer = PyObject_CallFunction(check, "nO", i, state);
            if (answer == NULL) goto done;
            verdict = answer == Py_True ? FITS : answer == Py_False ? MISSES : DECLINE;
            Py_DECREF(answer);
        }
    }
    if (verdict == DECLINE) goto done;
    if (verdict == MISSES) {
        *missed = 1;
        result = PyList_Append(found, Py_None);
        goto done;
    }
    if (write) {
        if (old == NULL && (old = exact_dict_item(state, row[4])) == NULL) goto done;
        /* Inputs are copied so that a host mutating what it sent cannot alter our cached value. */
        stored = PyDict_CheckExact(row[5]) ? PyDict_Copy(row[5]) : Py_NewRef(row[5]);
        if (stored == NULL) goto done;
        if (PyDict_SetItem(state, row[4], stored) < 0) {
            Py_DECREF(stored);
            goto done;
        }
        Py_DECREF(stored);
        if (PyList_Append(found, state) < 0) {
            if (PyDict_SetItem(state, row[4], old) < 0) PyErr_Clear(); /* not in the stores yet */
            goto done;
        }
        stores->states[stores->count] = state; /* held by ``found`` */
        stores->fields[stores->count] = Py_NewRef(row[4]);
        stores->olds[stores->count] = old;
        stores->count++;
        old = NULL;
        result = 0;
        goto done;
    }
    result = PyList_Append(found, state);
done:
    if (result < 0) PyErr_Clear();
    for (c = 0; c < 6; c++) Py_XDECREF(row[c]);
    Py_XDECREF(message);
    Py_XDECREF(parts);
    Py_XDECREF(part);
    Py_XDECREF(state);
    Py_XDECREF(call_id);
    Py_XDECREF(output);
    Py_XDECREF(old);
    return result;
}

static PyObject *walk(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    /* walk(host, messages, parts, calls, lengths, fields, values, fits, trusted_before, write, prefix, check)
       -> (states, whether any is None), or None to let the Python loop decide */
    PyObject *host, *columns[6], *fits, *prefix, *check, *found, *result;
    Py_ssize_t rows, trusted_before, block, blocks, end, i;
    Ahead *ahead;
    int write, missed = 0;
    Stores stores = {NULL, NULL, NULL, 0};
    (void)module;
    if (nargs != 12) {
        PyErr_SetString(PyExc_TypeError, "walk() takes 12 arguments");
        return NULL;
    }
    host = args[0];
    columns[0] = args[1]; /* message index */
    columns[1] = args[2]; /* part index */
    columns[2] = args[3]; /* call id */
    columns[3] = args[4]; /* whole placeholder length, or -1 */
    columns[4] = args[5]; /* field */
    columns[5] = args[6]; /* value */
    fits = args[7];
    prefix = args[10];
    check = args[11];
    if (!PyList_CheckExact(columns[0]) || !PyByteArray_CheckExact(fits) || !PyUnicode_CheckExact(prefix) ||
        !PyLong_CheckExact(args[8]) || !PyCallable_Check(check) || !PyList_CheckExact(host))
        Py_RETURN_NONE;
    rows = PyList_GET_SIZE(columns[0]);
    for (i = 1; i < 6; i++)
        if (!same_length(columns[i], rows)) Py_RETURN_NONE;
    if (PyByteArray_GET_SIZE(fits) != rows) Py_RETURN_NONE;
    trusted_before = PyLong_AsSsize_t(args[8]);
    write = PyObject_IsTrue(args[9]);
    if (PyErr_Occurred() || write < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    found = PyList_New(0);
    if (found == NULL) return NULL;
    if (write && rows > 0) {
        stores.states = PyMem_New(PyObject *, rows);
        stores.fields = PyMem_New(PyObject *, rows);
        stores.olds = PyMem_New(PyObject *, rows);
        if (stores.states == NULL || stores.fields == NULL || stores.olds == NULL) {
            drop_stores(&stores);
            Py_DECREF(found);
            return PyErr_NoMemory();
        }
    }
    ahead = PyMem_Calloc(1, sizeof(Ahead));
    if (ahead == NULL) {
        drop_stores(&stores);
        Py_DECREF(found);
        return PyErr_NoMemory();
    }
    blocks = (rows + BLOCK - 1) / BLOCK;
    for (block = -HOPS; block < blocks; block++) {
        int step;
        /* Block b takes hop h while block b - HOPS + h is checked: its last hop just before its turn. */
        for (step = 0; step < HOPS; step++) hop(ahead, step, host, columns[0], columns[1], block + HOPS - step, rows);
        if (block < 0) continue;
        end = (block + 1) * BLOCK < rows ? (block + 1) * BLOCK : rows;
        for (i = block * BLOCK; i < end; i++)
            if (walk_row(host, columns, fits, i, trusted_before, write, prefix, check, found, &stores, &missed) < 0)
                goto decline;
    }
    let_go(ahead);
    PyMem_Free(ahead);
    result = PyTuple_Pack(2, found, missed ? Py_True : Py_False);
    if (result == NULL) put_back(&stores); /* nothing written stays without its patches */
    drop_stores(&stores);
    Py_DECREF(found);
    return result;
decline:
    let_go(ahead);
    PyMem_Free(ahead);
    put_back(&stores);
    drop_stores(&stores);
    Py_DECREF(found);
    PyErr_Clear();
    Py_RETURN_NONE;
}
#else
/* Borrowed items of shared lists are not safe without the GIL: the Python loop does the walk. */
static PyObject *walk(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    (void)args;
    (void)nargs;
    Py_RETURN_NONE;
}
#endif

static PyMethodDef methods[] = {
    {"walk", (PyCFunction)(void (*)(void))walk, METH_FASTCALL,
     "Plan (and write) the rows of patches._plan_rows; None when the Python loop must decide."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_rowwalk", "The walk of patches._plan_rows in C, with prefetching.", -1, methods,
};

PyMODINIT_FUNC PyInit__rowwalk(void) {
    k_parts = PyUnicode_InternFromString("parts");
    k_state = PyUnicode_InternFromString("state");
    k_output = PyUnicode_InternFromString("output");
    k_status = PyUnicode_InternFromString("status");
    k_time = PyUnicode_InternFromString("time");
    k_compacted = PyUnicode_InternFromString("compacted");
    k_call_id = PyUnicode_InternFromString("callID");
    k_completed = PyUnicode_InternFromString("completed");
    if (!k_parts || !k_state || !k_output || !k_status || !k_time || !k_compacted || !k_call_id || !k_completed)
        return NULL;
    return PyModule_Create(&module_def);
}
