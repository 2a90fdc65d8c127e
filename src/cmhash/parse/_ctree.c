/* cmhash.parse._ctree: the position tree of parse/events.py, built in C from libyaml.
 *
 * The libyaml path of events.py makes a Python event object and two Mark objects for
 * every YAML event and then turns them into tree nodes; that crossing is most of a large
 * run's parse time. This module runs the same library (libyaml) over the same UTF-8
 * text and makes the tree nodes directly, so the offsets, values and styles are libyaml's
 * own, exactly as through PyYAML.
 *
 * It builds only the common case. Anything else -- a syntax error, an anchor, an alias,
 * a tag, a scalar over the size limit, nesting over the depth limit, text that is not
 * UTF-8-encodable -- returns None, and events.py parses the chunk again on its own path,
 * which reports errors and handles the rest exactly as before. So this module never
 * decides anything on its own; it is only a faster way to the same tree. Two extras: a
 * plain mapping gets tree.entries()' key index (_dict) as it is built, and Python signal
 * handlers run every 4,096 events, as they would between PyYAML's events.
 *
 * build(text, base, node_type, kinds, max_depth, max_scalar) -> list[Node] | None
 *   kinds: the (scalar, seq, map) kind strings of parse/tree.py.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <yaml.h>

/* Node's __slots__, in the order build() fills them. */
enum { S_KIND, S_START, S_END, S_VALUE, S_STYLE, S_TAG, S_ANCHOR, S_DICT, N_SLOTS };
static const char *const SLOT_NAMES[N_SLOTS] = {
    "kind", "start", "end", "value", "style", "tag", "anchor", "_dict",
};

typedef struct {
    PyTypeObject *type; /* the Node class the offsets were read from */
    Py_ssize_t offset[N_SLOTS];
} layout_t;

static layout_t layout = {NULL, {0}};

/* Read where each slot lives in a Node object, once per Node class: every slot must be a
 * plain object member (what __slots__ makes); anything else refuses to build. */
static int
read_layout(PyTypeObject *type)
{
    if (layout.type == type)
        return 0;
    if (type->tp_itemsize != 0 || !(type->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
        PyErr_SetString(PyExc_TypeError, "_ctree: Node must be a plain __slots__ class");
        return -1;
    }
    Py_ssize_t offset[N_SLOTS]; /* taken only when every slot is right */
    for (int i = 0; i < N_SLOTS; i++) {
        PyObject *descr = PyDict_GetItemString(type->tp_dict, SLOT_NAMES[i]);
        if (descr == NULL || !PyObject_TypeCheck(descr, &PyMemberDescr_Type)) {
            PyErr_Format(PyExc_TypeError, "_ctree: Node has no slot %s", SLOT_NAMES[i]);
            return -1;
        }
        PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
        if (m->type != T_OBJECT_EX || m->offset <= 0 ||
            (size_t)m->offset + sizeof(PyObject *) > (size_t)type->tp_basicsize) {
            PyErr_Format(PyExc_TypeError, "_ctree: slot %s is not an object slot",
                         SLOT_NAMES[i]);
            return -1;
        }
        offset[i] = m->offset;
    }
    if (type->tp_basicsize != (Py_ssize_t)(sizeof(PyObject) + N_SLOTS * sizeof(PyObject *))) {
        PyErr_SetString(PyExc_TypeError, "_ctree: Node has slots build() does not fill");
        return -1;
    }
    PyTypeObject *old = layout.type;
    memcpy(layout.offset, offset, sizeof offset);
    Py_INCREF(type);
    layout.type = type;
    Py_XDECREF(old);
    return 0;
}

/* A new Node; steals the references to value and style. */
static PyObject *
new_node(const layout_t *L, PyObject *kind, Py_ssize_t start, Py_ssize_t end, PyObject *value,
         PyObject *style)
{
    PyTypeObject *type = L->type;
    PyObject *node = type->tp_alloc(type, 0);
    PyObject *pstart = PyLong_FromSsize_t(start);
    PyObject *pend = PyLong_FromSsize_t(end); /* -1 while a collection is open */
    if (node == NULL || pstart == NULL || pend == NULL || value == NULL || style == NULL) {
        Py_XDECREF(node);
        Py_XDECREF(pstart);
        Py_XDECREF(pend);
        Py_XDECREF(value);
        Py_XDECREF(style);
        return NULL;
    }
    char *base = (char *)node;
    Py_INCREF(kind);
    *(PyObject **)(base + L->offset[S_KIND]) = kind;
    *(PyObject **)(base + L->offset[S_START]) = pstart;
    *(PyObject **)(base + L->offset[S_END]) = pend;
    *(PyObject **)(base + L->offset[S_VALUE]) = value;
    *(PyObject **)(base + L->offset[S_STYLE]) = style;
    Py_INCREF(Py_None);
    *(PyObject **)(base + L->offset[S_TAG]) = Py_None;
    Py_INCREF(Py_None);
    *(PyObject **)(base + L->offset[S_ANCHOR]) = Py_None;
    Py_INCREF(Py_None);
    *(PyObject **)(base + L->offset[S_DICT]) = Py_None;
    return node;
}

static void
set_slot(const layout_t *L, PyObject *node, int slot, PyObject *value)
{
    PyObject **p = (PyObject **)((char *)node + L->offset[slot]);
    PyObject *old = *p;
    *p = value;
    Py_XDECREF(old);
}

/* Scalar styles as PyYAML reports them, with plain as None (events.py: ev.style or None). */
static PyObject *STYLE_SINGLE, *STYLE_DOUBLE, *STYLE_LITERAL, *STYLE_FOLDED;

static PyObject *
scalar_style(yaml_scalar_style_t style)
{
    PyObject *s;
    switch (style) {
    case YAML_SINGLE_QUOTED_SCALAR_STYLE: s = STYLE_SINGLE; break;
    case YAML_DOUBLE_QUOTED_SCALAR_STYLE: s = STYLE_DOUBLE; break;
    case YAML_LITERAL_SCALAR_STYLE: s = STYLE_LITERAL; break;
    case YAML_FOLDED_SCALAR_STYLE: s = STYLE_FOLDED; break;
    default: s = Py_None; break;
    }
    Py_INCREF(s);
    return s;
}

/* An open mapping or sequence: its node and the children read so far. */
typedef struct {
    PyObject *node;
    PyObject *children; /* list */
    int is_map;
} frame_t;

/* Why a build stops: NONE keeps going; BAIL hands the chunk to events.py; FAIL is a
 * Python exception (out of memory). */
enum { NONE, BAIL, FAIL };

typedef struct {
    frame_t *stack;
    Py_ssize_t depth, cap, max_depth;
    PyObject *roots;
    layout_t L;          /* this build's copy of the layout (holds a reference to L.type) */
    PyObject *scalar_kind;
} builder_t;

static int
append(builder_t *b, PyObject *node)
{
    PyObject *into = b->depth ? b->stack[b->depth - 1].children : b->roots;
    int rc = PyList_Append(into, node);
    Py_DECREF(node);
    return rc < 0 ? FAIL : NONE;
}

static int
open_collection(builder_t *b, PyObject *kind, Py_ssize_t start, int flow, int is_map)
{
    PyObject *children = PyList_New(0);
    if (children == NULL)
        return FAIL;
    PyObject *style = flow ? Py_True : Py_False;
    Py_INCREF(style);
    Py_INCREF(Py_None);
    PyObject *node = new_node(&b->L, kind, start, -1, Py_None, style);
    if (node == NULL) {
        Py_DECREF(children);
        return FAIL;
    }
    Py_INCREF(node);
    if (append(b, node) == FAIL) {
        Py_DECREF(node);
        Py_DECREF(children);
        return FAIL;
    }
    if (b->depth >= b->max_depth) { /* events.py names the limit */
        Py_DECREF(node);
        Py_DECREF(children);
        return BAIL;
    }
    if (b->depth == b->cap) {
        Py_ssize_t cap = b->cap ? b->cap * 2 : 16;
        frame_t *stack = PyMem_Realloc(b->stack, (size_t)cap * sizeof(frame_t));
        if (stack == NULL) {
            Py_DECREF(node);
            Py_DECREF(children);
            PyErr_NoMemory();
            return FAIL;
        }
        b->stack = stack;
        b->cap = cap;
    }
    b->stack[b->depth].node = node;
    b->stack[b->depth].children = children;
    b->stack[b->depth].is_map = is_map;
    b->depth++;
    return NONE;
}

static PyObject *MERGE_KEY;   /* "<<" */

static PyObject *
slot(const layout_t *L, PyObject *node, int i)
{
    return *(PyObject **)((char *)node + L->offset[i]);
}

/* tree.entries()'s key -> (key, value) index of a mapping, made here while the pairs are
 * at hand, when it is plain: every key a scalar, no '<<' merge, no duplicate. Anything
 * else is left to entries(), which applies merges and refuses duplicates when a
 * mapping is first read, as before. */
static int
index_pairs(builder_t *b, PyObject *node, PyObject *pairs)
{
    Py_ssize_t n = PyList_GET_SIZE(pairs);
    PyObject *index = PyDict_New();
    if (index == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PyList_GET_ITEM(pairs, i);
        PyObject *key = PyTuple_GET_ITEM(pair, 0);
        PyObject *name = slot(&b->L, key, S_VALUE);
        if (slot(&b->L, key, S_KIND) != b->scalar_kind || !PyUnicode_CheckExact(name) ||
            (slot(&b->L, key, S_STYLE) == Py_None && PyUnicode_Compare(name, MERGE_KEY) == 0)) {
            Py_DECREF(index);
            return 0;
        }
        Py_ssize_t before = PyDict_GET_SIZE(index);
        if (PyDict_SetDefault(index, name, pair) == NULL) {
            Py_DECREF(index);
            return -1;
        }
        if (PyDict_GET_SIZE(index) == before) { /* a duplicate key */
            Py_DECREF(index);
            return 0;
        }
    }
    set_slot(&b->L, node, S_DICT, index);
    return 0;
}

static int
close_collection(builder_t *b, Py_ssize_t end)
{
    frame_t f = b->stack[--b->depth];
    PyObject *value = f.children;
    if (f.is_map) {
        Py_ssize_t n = PyList_GET_SIZE(f.children);
        if (n % 2) { /* cannot happen with libyaml; let events.py decide */
            Py_DECREF(f.node);
            Py_DECREF(f.children);
            return BAIL;
        }
        value = PyList_New(n / 2);
        if (value == NULL) {
            Py_DECREF(f.node);
            Py_DECREF(f.children);
            return FAIL;
        }
        for (Py_ssize_t i = 0; i < n / 2; i++) {
            PyObject *k = PyList_GET_ITEM(f.children, 2 * i);
            PyObject *v = PyList_GET_ITEM(f.children, 2 * i + 1);
            PyObject *pair = PyTuple_Pack(2, k, v);
            if (pair == NULL) {
                Py_DECREF(value);
                Py_DECREF(f.node);
                Py_DECREF(f.children);
                return FAIL;
            }
            PyList_SET_ITEM(value, i, pair);
        }
        Py_DECREF(f.children);
        if (index_pairs(b, f.node, value) < 0) {
            Py_DECREF(value);
            Py_DECREF(f.node);
            return FAIL;
        }
    }
    PyObject *pend = PyLong_FromSsize_t(end);
    if (pend == NULL) {
        Py_DECREF(value);
        Py_DECREF(f.node);
        return FAIL;
    }
    set_slot(&b->L, f.node, S_END, pend);
    set_slot(&b->L, f.node, S_VALUE, value);
    Py_DECREF(f.node);
    return NONE;
}

static int
untagged(yaml_char_t *tag)
{
    return tag == NULL || (tag[0] == '!' && tag[1] == '\0');
}

static int
on_event(builder_t *b, yaml_event_t *ev, Py_ssize_t base, PyObject *const kinds[3],
         Py_ssize_t max_scalar)
{
    Py_ssize_t start = base + (Py_ssize_t)ev->start_mark.index;
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        if (ev->data.scalar.anchor != NULL || ev->data.scalar.tag != NULL)
            return BAIL;
        PyObject *value = PyUnicode_DecodeUTF8((const char *)ev->data.scalar.value,
                                               (Py_ssize_t)ev->data.scalar.length, "strict");
        if (value == NULL)
            return FAIL;
        if (PyUnicode_GET_LENGTH(value) > max_scalar) {
            Py_DECREF(value);
            return BAIL;
        }
        PyObject *node = new_node(&b->L, kinds[0], start, base + (Py_ssize_t)ev->end_mark.index,
                                  value, scalar_style(ev->data.scalar.style));
        return node == NULL ? FAIL : append(b, node);
    }
    case YAML_SEQUENCE_START_EVENT:
        if (ev->data.sequence_start.anchor != NULL ||
            !untagged(ev->data.sequence_start.tag))
            return BAIL;
        return open_collection(b, kinds[1], start,
                               ev->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE, 0);
    case YAML_MAPPING_START_EVENT:
        if (ev->data.mapping_start.anchor != NULL || !untagged(ev->data.mapping_start.tag))
            return BAIL;
        return open_collection(b, kinds[2], start,
                               ev->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE, 1);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        if (b->depth == 0)
            return BAIL;
        return close_collection(b, base + (Py_ssize_t)ev->end_mark.index);
    case YAML_ALIAS_EVENT:
        return BAIL;
    default: /* stream and document framing */
        return NONE;
    }
}

static PyObject *
build(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *text, *kinds_tuple;
    Py_ssize_t base, max_depth, max_scalar;
    PyTypeObject *type;
    if (!PyArg_ParseTuple(args, "UnO!O!nn", &text, &base, &PyType_Type, &type, &PyTuple_Type,
                          &kinds_tuple, &max_depth, &max_scalar))
        return NULL;
    if (PyTuple_GET_SIZE(kinds_tuple) != 3) {
        PyErr_SetString(PyExc_ValueError, "_ctree: kinds is (scalar, seq, map)");
        return NULL;
    }
    if (read_layout(type) < 0)
        return NULL;
    PyObject *const kinds[3] = {PyTuple_GET_ITEM(kinds_tuple, 0),
                                PyTuple_GET_ITEM(kinds_tuple, 1),
                                PyTuple_GET_ITEM(kinds_tuple, 2)};
    if (!PyUnicode_CheckExact(text)) /* PyYAML's CParser refuses str subclasses */
        Py_RETURN_NONE;
    /* ASCII text is its own UTF-8; other text is encoded into a temporary bytes object,
     * as PyYAML does (PyUnicode_AsUTF8AndSize would keep a copy attached to the str,
     * doubling a whole file's text for the rest of the run) */
    PyObject *encoded = NULL;
    const char *utf8;
    Py_ssize_t size;
    if (PyUnicode_IS_ASCII(text)) {
        utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    }
    else {
        encoded = PyUnicode_AsUTF8String(text);
        utf8 = encoded == NULL ? NULL : PyBytes_AS_STRING(encoded);
        size = encoded == NULL ? 0 : PyBytes_GET_SIZE(encoded);
    }
    if (utf8 == NULL) { /* lone surrogates: events.py's path raises, as it always did */
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        Py_XDECREF(encoded);
        return PyErr_NoMemory();
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)utf8, (size_t)size);
    /* no yaml_parser_set_encoding: PyYAML leaves it to libyaml's detection too, which
     * skips a leading byte-order mark without counting it in the offsets */
    builder_t b = {NULL, 0, 0, max_depth, PyList_New(0), layout, kinds[0]};
    Py_INCREF(b.L.type);
    unsigned long events = 0;
    int stop = b.roots == NULL ? FAIL : NONE;
    int done = 0;
    while (stop == NONE && !done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            stop = BAIL; /* a syntax error: events.py reports it */
            break;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        if ((++events & 4095) == 0 && PyErr_CheckSignals() < 0) {
            yaml_event_delete(&ev);
            stop = FAIL; /* KeyboardInterrupt, or what a handler raised */
            break;
        }
        stop = on_event(&b, &ev, base, kinds, max_scalar);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    Py_XDECREF(encoded);
    if (stop == NONE && b.depth != 0)
        stop = BAIL;
    while (b.depth > 0) {
        b.depth--;
        Py_DECREF(b.stack[b.depth].node);
        Py_DECREF(b.stack[b.depth].children);
    }
    PyMem_Free(b.stack);
    Py_DECREF(b.L.type);
    if (stop == NONE)
        return b.roots;
    Py_XDECREF(b.roots);
    if (stop == FAIL)
        return NULL;
    Py_RETURN_NONE;
}

/* Tree equality for write/treecheck.py: two nodes are the same when kind, style, tag,
 * anchor and value are equal (mappings pair by pair in order, sequences item by item);
 * offsets do not count. The reference is treecheck._same_py; this is the same walk
 * without a Python frame per node. An alias node is never the same as anything (the C
 * builder never makes one; treecheck hands such trees to verify.py). */
static int same_node(const layout_t *L, PyObject *const kinds[3], PyObject *a, PyObject *b);

static int
same_items(const layout_t *L, PyObject *const kinds[3], PyObject *a, PyObject *b, int pairs)
{
    if (!PyList_Check(a) || !PyList_Check(b)) {
        PyErr_SetString(PyExc_TypeError, "_ctree.same: a collection's value is not a list");
        return -1;
    }
    Py_ssize_t n = PyList_GET_SIZE(a);
    if (n != PyList_GET_SIZE(b))
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyList_GET_ITEM(a, i), *y = PyList_GET_ITEM(b, i);
        int r;
        if (pairs) {
            if (!PyTuple_Check(x) || !PyTuple_Check(y) || PyTuple_GET_SIZE(x) != 2 ||
                PyTuple_GET_SIZE(y) != 2) {
                PyErr_SetString(PyExc_TypeError, "_ctree.same: a mapping entry is not a pair");
                return -1;
            }
            r = same_node(L, kinds, PyTuple_GET_ITEM(x, 0), PyTuple_GET_ITEM(y, 0));
            if (r > 0)
                r = same_node(L, kinds, PyTuple_GET_ITEM(x, 1), PyTuple_GET_ITEM(y, 1));
        }
        else {
            r = same_node(L, kinds, x, y);
        }
        if (r <= 0)
            return r;
    }
    return 1;
}

static int
same_node(const layout_t *L, PyObject *const kinds[3], PyObject *a, PyObject *b)
{
    if (Py_TYPE(a) != L->type || Py_TYPE(b) != L->type) {
        PyErr_SetString(PyExc_TypeError, "_ctree.same: not a Node");
        return -1;
    }
    static const int compared[] = {S_KIND, S_STYLE, S_TAG, S_ANCHOR, S_VALUE};
    for (int i = 0; i < 5; i++) {
        if (slot(L, a, compared[i]) == NULL || slot(L, b, compared[i]) == NULL) {
            PyErr_SetString(PyExc_TypeError, "_ctree.same: a Node slot is unset");
            return -1;
        }
    }
    for (int i = 0; i < 4; i++) {
        int r = PyObject_RichCompareBool(slot(L, a, compared[i]), slot(L, b, compared[i]),
                                         Py_EQ);
        if (r <= 0)
            return r;
    }
    PyObject *kind = slot(L, a, S_KIND), *va = slot(L, a, S_VALUE), *vb = slot(L, b, S_VALUE);
    int r = PyObject_RichCompareBool(kind, kinds[0], Py_EQ);
    if (r != 0)
        return r < 0 ? r : PyObject_RichCompareBool(va, vb, Py_EQ);
    int is_map = PyObject_RichCompareBool(kind, kinds[2], Py_EQ);
    int is_seq = is_map ? 0 : PyObject_RichCompareBool(kind, kinds[1], Py_EQ);
    if (is_map < 0 || is_seq < 0)
        return -1;
    if (!is_map && !is_seq)
        return 0; /* an alias */
    if (Py_EnterRecursiveCall(" in _ctree.same"))
        return -1;
    r = same_items(L, kinds, va, vb, is_map);
    Py_LeaveRecursiveCall();
    return r;
}

static PyObject *
same_pairs(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *a, *b, *kinds_tuple;
    PyTypeObject *type;
    if (!PyArg_ParseTuple(args, "OOO!O!", &a, &b, &PyType_Type, &type, &PyTuple_Type,
                          &kinds_tuple))
        return NULL;
    if (PyTuple_GET_SIZE(kinds_tuple) != 3) {
        PyErr_SetString(PyExc_ValueError, "_ctree: kinds is (scalar, seq, map)");
        return NULL;
    }
    if (read_layout(type) < 0)
        return NULL;
    layout_t L = layout; /* this call's copy, as in build() */
    Py_INCREF(L.type);
    PyObject *const kinds[3] = {PyTuple_GET_ITEM(kinds_tuple, 0),
                                PyTuple_GET_ITEM(kinds_tuple, 1),
                                PyTuple_GET_ITEM(kinds_tuple, 2)};
    int r = same_items(&L, kinds, a, b, 1);
    Py_DECREF(L.type);
    if (r < 0)
        return NULL;
    return PyBool_FromLong(r);
}

static PyMethodDef methods[] = {
    {"build", build, METH_VARARGS,
     "build(text, base, node_type, kinds, max_depth, max_scalar) -> list | None"},
    {"same_pairs", same_pairs, METH_VARARGS,
     "same_pairs(pairs_a, pairs_b, node_type, kinds) -> bool: equal mapping entries"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ctree",
    "The position tree of parse/events.py, built in C from libyaml.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__ctree(void)
{
    STYLE_SINGLE = PyUnicode_InternFromString("'");
    STYLE_DOUBLE = PyUnicode_InternFromString("\"");
    STYLE_LITERAL = PyUnicode_InternFromString("|");
    STYLE_FOLDED = PyUnicode_InternFromString(">");
    MERGE_KEY = PyUnicode_InternFromString("<<");
    if (!STYLE_SINGLE || !STYLE_DOUBLE || !STYLE_LITERAL || !STYLE_FOLDED || !MERGE_KEY)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddStringConstant(m, "LIBYAML_VERSION", yaml_get_version_string()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
