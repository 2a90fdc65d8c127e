/* cmhash._cjson: jsonout.dumps in C.
 *
 * json.dumps(data, indent=2, ensure_ascii=False), exactly, for the documents cmhash
 * writes (explain, report): dicts with string keys, lists and tuples, strings (text
 * enums among them), ints, booleans and None. The standard library leaves its C encoder
 * when indent is set; jsonout.py's Python writer is the reference (it takes over where
 * this module is missing). Strings go through the standard library's own escaper
 * (json.encoder.encode_basestring, passed in), so they are escaped exactly as json.dumps
 * escapes them. Anything else (a float, a non-string key, a dict subclass) returns None,
 * and jsonout.py hands the whole document to json.dumps.
 *
 * write(data, encode_basestring) -> str | None
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The pieces every document repeats, made once: literals, and per nesting depth the
 * indentation strings ("{" + newline + indent, "," + newline + indent, newline + "}"). */
#define MAX_CACHED_DEPTH 64
static PyObject *S_NULL, *S_TRUE, *S_FALSE, *S_COLON, *S_EMPTY_DICT, *S_EMPTY_LIST, *S_EMPTY;
static PyObject *open_dict[MAX_CACHED_DEPTH], *open_list[MAX_CACHED_DEPTH];
static PyObject *comma[MAX_CACHED_DEPTH], *close_dict[MAX_CACHED_DEPTH],
    *close_list[MAX_CACHED_DEPTH];

/* The string for depth d ("%s\n" + 2*d spaces + "%s"), made on first use. */
static PyObject *
indented(PyObject **cache, int depth, const char *before, const char *after)
{
    if (depth < MAX_CACHED_DEPTH && cache[depth] != NULL)
        return Py_NewRef(cache[depth]);
    size_t n = strlen(before) + 1 + 2 * (size_t)depth + strlen(after);
    char *buf = PyMem_Malloc(n + 1);
    if (buf == NULL)
        return PyErr_NoMemory();
    char *p = buf;
    p += sprintf(p, "%s\n", before);
    memset(p, ' ', 2 * (size_t)depth);
    p += 2 * depth;
    strcpy(p, after);
    PyObject *str = PyUnicode_FromStringAndSize(buf, (Py_ssize_t)n);
    PyMem_Free(buf);
    if (str != NULL && depth < MAX_CACHED_DEPTH)
        cache[depth] = Py_NewRef(str);
    return str;
}

/* Steals the reference to piece. */
static int
append(PyObject *out, PyObject *piece)
{
    if (piece == NULL)
        return -1;
    int rc = PyList_Append(out, piece);
    Py_DECREF(piece);
    return rc;
}

/* 1 written, 0 a value this writer leaves to json.dumps, -1 a Python exception */
static int write_value(PyObject *out, PyObject *value, int depth, PyObject *escape);

static int
write_items(PyObject *out, PyObject *value, int depth, PyObject *escape, int is_dict)
{
    int inner = depth + 1;
    PyObject *first = indented(is_dict ? open_dict : open_list, inner, is_dict ? "{" : "[", "");
    PyObject *next = indented(comma, inner, ",", "");
    if (first == NULL || next == NULL) {
        Py_XDECREF(first);
        Py_XDECREF(next);
        return -1;
    }
    int r = 1;
    if (is_dict) {
        Py_ssize_t pos = 0;
        PyObject *key, *item;
        int i = 0;
        while (r > 0 && PyDict_Next(value, &pos, &key, &item)) {
            if (!PyUnicode_Check(key)) {
                r = 0;
                break;
            }
            if (append(out, Py_NewRef(i++ ? next : first)) < 0 ||
                append(out, PyObject_CallOneArg(escape, key)) < 0 ||
                append(out, Py_NewRef(S_COLON)) < 0) {
                r = -1;
                break;
            }
            r = write_value(out, item, inner, escape);
        }
    }
    else {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(value);
        PyObject **items = PySequence_Fast_ITEMS(value);
        for (Py_ssize_t i = 0; r > 0 && i < n; i++) {
            if (append(out, Py_NewRef(i ? next : first)) < 0) {
                r = -1;
                break;
            }
            r = write_value(out, items[i], inner, escape);
        }
    }
    Py_DECREF(first);
    Py_DECREF(next);
    if (r > 0) {
        PyObject *close = indented(is_dict ? close_dict : close_list, depth, "", is_dict ? "}" : "]");
        r = append(out, close) < 0 ? -1 : 1;
    }
    return r;
}

static int
write_value(PyObject *out, PyObject *value, int depth, PyObject *escape)
{
    PyTypeObject *type = Py_TYPE(value);
    if (type == &PyUnicode_Type)
        return append(out, PyObject_CallOneArg(escape, value)) < 0 ? -1 : 1;
    if (type == &PyDict_Type || type == &PyList_Type || type == &PyTuple_Type) {
        int is_dict = type == &PyDict_Type;
        Py_ssize_t n = is_dict ? PyDict_GET_SIZE(value) : PySequence_Fast_GET_SIZE(value);
        if (n == 0)
            return append(out, Py_NewRef(is_dict ? S_EMPTY_DICT : S_EMPTY_LIST)) < 0 ? -1 : 1;
        if (Py_EnterRecursiveCall(" in cmhash._cjson.write"))
            return -1;
        int r = write_items(out, value, depth, escape, is_dict);
        Py_LeaveRecursiveCall();
        return r;
    }
    if (value == Py_None)
        return append(out, Py_NewRef(S_NULL)) < 0 ? -1 : 1;
    if (value == Py_True)
        return append(out, Py_NewRef(S_TRUE)) < 0 ? -1 : 1;
    if (value == Py_False)
        return append(out, Py_NewRef(S_FALSE)) < 0 ? -1 : 1;
    if (type == &PyLong_Type)
        return append(out, PyLong_Type.tp_repr(value)) < 0 ? -1 : 1;
    if (PyUnicode_Check(value)) /* a text enum (str subclass): its value, as json does */
        return append(out, PyObject_CallOneArg(escape, value)) < 0 ? -1 : 1;
    return 0;
}

static PyObject *
cjson_write(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *data, *escape;
    if (!PyArg_ParseTuple(args, "OO", &data, &escape))
        return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    int r = write_value(out, data, 0, escape);
    PyObject *result = NULL;
    if (r > 0)
        result = PyUnicode_Join(S_EMPTY, out);
    else if (r == 0)
        result = Py_NewRef(Py_None);
    Py_DECREF(out);
    return result;
}

static PyMethodDef methods[] = {
    {"write", cjson_write, METH_VARARGS,
     "write(data, encode_basestring) -> str | None: json.dumps(data, indent=2, "
     "ensure_ascii=False), or None for a value only json.dumps writes"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cjson", "jsonout.dumps in C.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__cjson(void)
{
    S_NULL = PyUnicode_InternFromString("null");
    S_TRUE = PyUnicode_InternFromString("true");
    S_FALSE = PyUnicode_InternFromString("false");
    S_COLON = PyUnicode_InternFromString(": ");
    S_EMPTY_DICT = PyUnicode_InternFromString("{}");
    S_EMPTY_LIST = PyUnicode_InternFromString("[]");
    S_EMPTY = PyUnicode_InternFromString("");
    if (!S_NULL || !S_TRUE || !S_FALSE || !S_COLON || !S_EMPTY_DICT || !S_EMPTY_LIST || !S_EMPTY)
        return NULL;
    return PyModule_Create(&module);
}
