"""The quiz of lesson 04: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

QUESTIONS = (
    ask("Why are the scores divided by √d_k before the softmax?",
       ("So that each row of weights adds up to 1.", W,
        "Softmax does that on its own; scaling does not change whether rows add up to 1."),
       ("With query and key entries of mean 0 and variance 1, a dot product adds up d_k terms, so its "
        "variance is d_k and its typical size √d_k. Dividing by √d_k brings the scores back to a spread "
        "of about 1 whatever d_k is.", R,
        "Right. Without it, wider heads would produce larger scores, and softmax would saturate."),
       ("To make the computation faster.", W,
        "It costs one extra multiplication per score; its purpose is numerical, not speed."),
       ("Because d_k is the number of tokens, and an average must divide by it.", W,
        "d_k is the length of the query and key vectors, not the number of tokens; and it is softmax "
        "that turns the scores into weights."),
       source="seed 000, step 3; seed 004, step 2"),
    ask("What happens to softmax when the scores in a row are very large in size, as with d_k = 512 "
       "and no scaling?",
       ("It becomes uniform: every token gets the same weight.", W,
        "That is the opposite extreme, reached when all the scores are close to zero (for instance "
        "after dividing by too much)."),
       ("The rows stop adding up to 1.", W,
        "Softmax rows always add up to 1 (up to rounding). What changes is how the weight is spread."),
       ("It saturates: almost all the weight goes to the largest score, the others get nearly zero, "
        "and the gradients for those other tokens nearly vanish.", R,
        "Yes. Softmax of large numbers is almost one-hot, and a one-hot softmax barely changes when the "
        "scores change, so learning slows down."),
       ("Some weights become negative.", W,
        "exp of any number is positive, so softmax weights are never negative."),
       source="seed 000, step 3 and symbol table"),
    ask("A classmate divides by d_k instead of √d_k. With d_k = 256, what do the weights look like?",
       ("Too flat: the scores shrink by 256 instead of 16, so they all sit near 0 and the weights come "
        "out nearly uniform.", R,
        "Right. Dividing by too much removes the differences between scores, so attention cannot focus "
        "on anything."),
       ("Exactly the same: the two differ only by a constant.", W,
        "Softmax ignores a constant added to a row, not a constant factor. Dividing by a larger number "
        "makes the distribution flatter."),
       ("Saturated: almost one-hot.", W,
        "That is what too little scaling does. Dividing by d_k is too much scaling."),
       source="seed 000, step 3"),
    ask("After the softmax, what holds for every row of the weight matrix?",
       ("Every column adds up to 1.", W,
        "Softmax runs along each row (over the keys, for one query). A column can add up to anything "
        "between 0 and the number of queries."),
       ("The diagonal entry is the largest: each token attends most to itself.", W,
        "That happens often but is not guaranteed: in the 'it' example the largest weight goes to "
        "'animal' or 'street'."),
       ("The entries add up to d_k.", W,
        "d_k plays no part in the softmax's normalisation; the entries add up to 1."),
       ("Every entry lies between 0 and 1 and the row adds up to 1: a probability distribution over "
        "the keys.", R,
        "Yes: row i says what share of its attention query i gives to each key."),
       source="seed 000, step 3; seed 004, step 3"),
)
