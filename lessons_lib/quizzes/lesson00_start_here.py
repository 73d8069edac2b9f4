"""The quiz of lesson 00: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

QUESTIONS = (
    ask("In Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V, what is one row of the matrix Q?",
       ("The learned weight matrix W_Q, which turns every embedding into a query.", W,
        "That is W_Q. Q is what comes out after the token embeddings X are multiplied by it: "
        "Q = X·W_Q, with one row per token."),
       ("A row of attention weights: how much one token attends to each of the others.", W,
        "That is a row of the attention weights, softmax(Q·Kᵀ / √d_k), which only appears in step 3."),
       ("One summary vector of the whole sentence.", W,
        "Attention keeps one vector per token; nothing in the formula squeezes the sentence into a "
        "single row."),
       ("One token's query vector: what that token is looking for.", R,
        "Yes. Rows are tokens, so row i of Q is token i's query, what it is looking for; it is compared "
        "with every key to decide where token i looks."),
       source="seed 000, core formula and symbol table"),
    ask("What does d_k, under the square root, count?",
       ("The length of each query and key vector.", R,
        "Right: Q and K are (seq_len, d_k). A query-key dot product adds up d_k products, which is why "
        "its size grows with d_k and why the formula divides by √d_k."),
       ("The number of tokens in the sequence, which sets the size of the score matrix.", W,
        "The number of tokens is the sequence length. It sets the size of the score matrix "
        "(seq_len × seq_len), not the scaling factor."),
       ("The number of attention heads.", W,
        "Heads come later (multi-head attention). Inside one head, d_k is the width of that head's "
        "queries and keys."),
       ("The number of words in the vocabulary that the embedding table knows.", W,
        "The vocabulary size matters for the embedding table that makes X, not inside attention."),
       source="seed 000, symbol table"),
    ask("Which part of the formula turns raw similarity scores into weights that are positive and add up "
       "to 1 along each row?",
       ("Dividing by √d_k, which brings the scores to a comparable size.", W,
        "Scaling changes how big the scores are, but they can still be negative and their rows add up "
        "to nothing in particular."),
       ("The transpose in Kᵀ, which pairs every query with every key.", W,
        "The transpose only lines up the shapes, so that the matrix product pairs every query with "
        "every key."),
       ("The row-wise softmax.", R,
        "Yes: softmax exponentiates every score (so all become positive) and divides by the row's total "
        "(so each row adds up to 1)."),
       ("The final multiplication by V, which mixes the values.", W,
        "Multiplying by V uses the weights to mix the values; it does not make the weights."),
       source="seed 000, symbol table"),
)
